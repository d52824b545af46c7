// The status of one pass, written once: the pass puts conditions (and on success its fields) on a
// StatusScope, and `withStatus` writes the result after the pass, whatever its exit, through the
// gatekeeper's exit hooks and the port, which writes only a difference (no timestamp-only writes,
// upstream issue 250). A written condition that changed status or reason is also an Event: Normal for
// success and for a wait, Warning for a failure, none for a transient one (an endpoint down).
import type { ObjectMeta } from "../api/index.ts";
import type { GatePass } from "../gatekeeper/gatekeeper.ts";
import { asKubeObject } from "../runtime/port/kube-objects.ts";
import { isApiStatus } from "../runtime/port/kube-rest.ts";
import { nextStatus, type Condition, type DesiredCondition } from "../runtime/base/conditions.ts";
import type { ExternalDeps } from "./deps.ts";
import type { ExternalKind } from "./kind.ts";

export interface StatusTarget {
  metadata: ObjectMeta;
  status?: unknown;
}

/** What a False condition means for its Event: a wait (Normal), a transient failure (none). */
export type Classified = "waiting" | "transient";

/** What a pass found: the conditions to set, and on success the status fields. Nothing set, nothing written. */
export class StatusScope {
  updates: readonly DesiredCondition[] = [];
  success: { fields: Record<string, unknown> } | undefined;
  kind: Classified | undefined;

  set(
    updates: readonly DesiredCondition[],
    options: { kind?: Classified; success?: { fields: Record<string, unknown> } } = {},
  ): void {
    this.updates = updates;
    this.kind = options.kind;
    this.success = options.success;
  }
}

type StatusOf = Pick<ExternalKind<never, never, unknown, unknown>, "kind" | "connector">;

/** Runs `pass`, then writes the status it set: the one status write of the pass. */
export async function withStatus<T>(
  deps: ExternalDeps,
  kind: StatusOf,
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
    if (scope.updates.length > 0) await writeStatus(deps, kind, object, scope, gate, failure);
  }
}

async function writeStatus(
  deps: ExternalDeps,
  kind: StatusOf,
  object: StatusTarget,
  scope: StatusScope,
  gate: GatePass,
  failure: unknown,
): Promise<void> {
  const current = object.status as { conditions?: Condition[] } | undefined;
  const { observedOnSuccess, ...rules } = kind.connector.status;
  const { generation } = object.metadata;
  const computed = nextStatus(
    current,
    { conditions: [...scope.updates], ...scope.success?.fields },
    observedOnSuccess && !scope.success ? undefined : generation,
    deps.clock.now(),
    rules,
  ).status;
  // The gatekeeper's exit hooks see the status about to be written; theirs is what is written.
  const next = await gate.exit(computed, failure);
  try {
    if (!(await deps.kube.patchStatus(kind.kind, asKubeObject(object), next))) return;
  } catch (error) {
    // Deleted meanwhile: there is no status left to keep.
    if (isApiStatus(error, 404)) return;
    throw error;
  }
  const type = scope.kind === "waiting" ? "Normal" : scope.kind === "transient" ? "none" : undefined;
  const after = (next["conditions"] ?? []) as Condition[];
  deps.events?.record(kind.kind, object, current?.conditions, after, type);
}
