// The status of one pass, written once: the pass puts conditions (and on success its fields) on a
// StatusScope, and `withStatus` writes the result after the pass, whatever its exit, through the
// gatekeeper's exit hooks and the port, which writes only a difference (no timestamp-only writes,
// upstream issue 250). A written condition that changed status or reason is also an Event: Normal for
// success and for a wait, Warning for a failure, none for a transient one (an endpoint down).
import type { ObjectMeta } from "../api/index.ts";
import type { GatePass } from "../gatekeeper/gatekeeper.ts";
import { asKubeObject } from "../runtime/port/kube-objects.ts";
import { isApiStatus } from "../runtime/port/kube-rest.ts";
import type { ConditionRecord, ExternalDeps } from "./deps.ts";
import type { ConditionUpdate, ExternalHandler } from "./handler.ts";

export interface StatusTarget {
  metadata: ObjectMeta;
  status?: unknown;
}

/** What a False condition means for its Event: a wait (Normal), a transient failure (none). */
export type Classified = "waiting" | "transient";

/** What a pass found: the conditions to set, and on success the status fields. Nothing set, nothing written. */
export class StatusScope {
  updates: readonly ConditionUpdate[] = [];
  success: { fields: Record<string, unknown> } | undefined;
  kind: Classified | undefined;

  set(
    updates: readonly ConditionUpdate[],
    options: { kind?: Classified; success?: { fields: Record<string, unknown> } } = {},
  ): void {
    this.updates = updates;
    this.kind = options.kind;
    this.success = options.success;
  }
}

type StatusOf = Pick<ExternalHandler<never, never, unknown, unknown>, "kind" | "conditions">;

/** Runs `pass`, then writes the status it set: the one status write of the pass. */
export async function withStatus<T>(
  deps: ExternalDeps,
  handler: StatusOf,
  object: StatusTarget,
  gate: GatePass,
  pass: (status: StatusScope) => Promise<T>,
): Promise<T> {
  const scope = new StatusScope();
  let failure: unknown;
  try {
    return await pass(scope);
  } catch (error) {
    failure = error;
    throw error;
  } finally {
    if (scope.updates.length > 0) await writeStatus(deps, handler, object, scope, gate, failure);
  }
}

async function writeStatus(
  deps: ExternalDeps,
  handler: StatusOf,
  object: StatusTarget,
  scope: StatusScope,
  gate: GatePass,
  failure: unknown,
): Promise<void> {
  const current = object.status as { conditions?: ConditionRecord[] } | undefined;
  const computed = handler.conditions.next(
    current,
    scope.updates,
    object.metadata.generation,
    deps.clock.now(),
    scope.success,
  );
  // The gatekeeper's exit hooks see the status about to be written; theirs is what is written.
  const next = await gate.exit(computed, failure);
  try {
    if (!(await deps.kube.patchStatus(handler.kind, asKubeObject(object), next))) return;
  } catch (error) {
    // Deleted meanwhile: there is no status left to keep.
    if (isApiStatus(error, 404)) return;
    throw error;
  }
  const type = scope.kind === "waiting" ? "Normal" : scope.kind === "transient" ? "none" : undefined;
  const after = (next["conditions"] ?? []) as ConditionRecord[];
  deps.events?.record(handler.kind, object, current?.conditions, after, type);
}
