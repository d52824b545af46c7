// The status of one pass, written once: the pass puts conditions (and on success its fields) on a
// StatusScope, and `withStatus` writes the result after the pass, whatever its exit, through the
// port, which writes only a difference (no timestamp-only writes, upstream issue 250). A written
// condition that changed status or reason is also reported as an event, as seed 004's table has it:
// Normal for success and for a wait, Warning for a failure, none for a transient one (a broker down).
import type { KindRef, ObjectMeta } from "../../api/index.ts";
import type { GatePass } from "../../gatekeeper/gatekeeper.ts";
import { isApiStatus } from "../../runtime/kube-rest.ts";
import { nextStatus, type Condition, type StatusFields } from "./conditions.ts";
import type { ControllerDeps } from "./deps.ts";
import { asKubeObject } from "../../runtime/kube-objects.ts";

export type ConditionUpdate = Omit<Condition, "lastTransitionTime">;

export interface StatusTarget {
  metadata: ObjectMeta;
  status?: unknown;
}

/** What a pass found: the conditions to set, and on success the status fields. Nothing set, nothing written. */
export class StatusScope {
  updates: readonly ConditionUpdate[] = [];
  success: { fields: Record<string, unknown> } | undefined;
  /** What a False condition means for its event: a wait (Normal), a transient failure (none). */
  kind: "waiting" | "transient" | undefined;

  classify(kind: "waiting" | "transient"): void {
    this.kind = kind;
  }

  set(updates: readonly ConditionUpdate[], success?: { fields: Record<string, unknown> }): void {
    this.updates = updates;
    this.success = success;
  }
}

/** Runs `pass`, then writes the status it set: the one status write of the pass. */
export async function withStatus<T>(
  deps: ControllerDeps,
  kind: KindRef,
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
  deps: ControllerDeps,
  kind: KindRef,
  object: StatusTarget,
  scope: StatusScope,
  gate: GatePass,
  failure: unknown,
): Promise<void> {
  const current = object.status as StatusFields | undefined;
  const computed = nextStatus(
    current,
    scope.updates,
    new Date(deps.clock.now()),
    scope.success && { generation: object.metadata.generation, fields: scope.success.fields },
  );
  // The gatekeeper's exit hooks see the status about to be written; theirs is what is written.
  const next = await gate.exit(computed, failure);
  try {
    if (!(await deps.kube.patchStatus(kind, asKubeObject(object), next))) return;
  } catch (error) {
    // Deleted meanwhile: there is no status left to keep.
    if (isApiStatus(error, 404)) return;
    throw error;
  }
  const type = scope.kind === "waiting" ? "Normal" : scope.kind === "transient" ? "none" : undefined;
  deps.events?.record(kind, object, current?.conditions, next.conditions ?? [], type);
}
