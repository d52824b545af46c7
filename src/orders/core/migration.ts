// Where an order is, read from its children: the backend its delivered user is on, and a migration while
// anything of the order is on another backend than the one the ControlPlane names. A migration is a
// rotation whose successor is on the new backend (generations/target.ts, cause "moved"): Provisioning
// while the delivered user is on the old backend, Draining from the switch until the old backend's users
// are swept and its container released.
import type { OrderEvent } from "./deps.ts";

export interface Migration {
  from: string;
  to: string;
  phase: "Provisioning" | "Draining";
}

export interface Placement {
  /** The backend the delivered user is on; undefined while nothing is delivered. */
  backend?: string | undefined;
  migration?: Migration | undefined;
}

/**
 * `delivered` is the backend of the generation the Secret carries after this pass (undefined: none, or
 * its children lost, then the current one); `held` the backends the order's containers and generations
 * name.
 */
export function placementOf(input: {
  current: string;
  delivering: boolean;
  delivered: string | undefined;
  held: readonly (string | undefined)[];
}): Placement {
  const { current } = input;
  if (!input.delivering) return {};
  const backend = input.delivered ?? current;
  if (backend !== current)
    return { backend, migration: { from: backend, to: current, phase: "Provisioning" } };
  const from = input.held.find((b): b is string => b !== undefined && b !== current);
  return from === undefined ? { backend } : { backend, migration: { from, to: current, phase: "Draining" } };
}

/** What the resource condition's message says of a migration under way, after what it says already. */
export function migrationNote(backendKind: string, migration: Migration | undefined): string {
  if (!migration) return "";
  const { from, to } = migration;
  return migration.phase === "Provisioning"
    ? `; moving from ${backendKind} "${from}" to "${to}": the delivered user stays on "${from}" until a user on "${to}" is Ready and accepted`
    : `; moved from ${backendKind} "${from}" to "${to}": what the order holds on "${from}" is released once its users are swept`;
}

/**
 * The Events of a migration's steps, from the status before and after a pass; `backend` is the backend
 * the delivered user is on after it.
 */
export function migrationEvents(
  backendKind: string,
  before: Migration | undefined,
  after: Migration | undefined,
  backend: string | undefined,
): OrderEvent[] {
  const event = (reason: string, message: string): OrderEvent[] => [{ type: "Normal", reason, message }];
  if (!before && after)
    return event("MigrationStarted", `moving from ${backendKind} "${after.from}" to "${after.to}"`);
  // Ended where it started: the ControlPlane named the old backend again before the switch.
  if (before && !after && backend !== before.to)
    return event(
      "MigrationRedirected",
      `the ControlPlane names ${backendKind} "${backend ?? ""}" again, no longer "${before.to}"; nothing of the order is left on "${before.to}"`,
    );
  if (before && !after)
    return event(
      "MigrationCompleted",
      `moved to ${backendKind} "${before.to}": the order's users and container on "${before.from}" are gone (the resource itself as spec.deletionPolicy says)`,
    );
  if (!before || !after) return [];
  if (before.to !== after.to)
    return event(
      "MigrationRedirected",
      `the ControlPlane names ${backendKind} "${after.to}" now, no longer "${before.to}"`,
    );
  if (before.phase === "Provisioning" && after.phase === "Draining")
    return event(
      "MigrationSwitched",
      `the delivered Secret names ${backendKind} "${after.to}" now; the users on "${after.from}" are removed after their grace period`,
    );
  return [];
}
