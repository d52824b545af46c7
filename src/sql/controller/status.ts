// The status of one pass, written once: the pass sets the Ready condition on a StatusScope, and
// `withStatus` writes it after the pass whatever its exit, through the port, which writes only a
// difference. A Ready that changed status or reason is also an event: Normal for success and for a
// wait, Warning for a failure, none while the server cannot be reached.
import type { DesiredCondition } from "../../runtime/conditions.ts";
import type { KindRef, ObjectMeta } from "../../api/index.ts";
import { isApiStatus } from "../../runtime/kube-rest.ts";
import { nextStatus, type SqlStatus } from "./conditions.ts";
import type { SqlDeps } from "./deps.ts";
import { asKubeObject } from "../../runtime/kube-objects.ts";

export interface StatusTarget {
  metadata: ObjectMeta;
  status?: SqlStatus | undefined;
}

export class StatusScope {
  condition: DesiredCondition | undefined;
  kind: "waiting" | "transient" | undefined;

  set(condition: DesiredCondition, kind?: "waiting" | "transient"): void {
    this.condition = condition;
    this.kind = kind;
  }
}

export async function withStatus<T>(
  deps: SqlDeps,
  kind: KindRef,
  object: StatusTarget,
  pass: (status: StatusScope) => Promise<T>,
): Promise<T> {
  const scope = new StatusScope();
  try {
    return await pass(scope);
  } finally {
    if (scope.condition) await writeStatus(deps, kind, object, scope.condition, scope.kind);
  }
}

async function writeStatus(
  deps: SqlDeps,
  kind: KindRef,
  object: StatusTarget,
  condition: DesiredCondition,
  classified: StatusScope["kind"],
): Promise<void> {
  const current = object.status;
  const next = nextStatus(current, condition, object.metadata.generation, deps.clock.now());
  try {
    if (!(await deps.kube.patchStatus(kind, asKubeObject(object), { ...next }))) return;
  } catch (error) {
    if (isApiStatus(error, 404)) return;
    throw error;
  }
  const type = classified === "waiting" ? "Normal" : classified === "transient" ? "none" : undefined;
  await deps.events?.record(kind, object, current?.conditions, next.conditions ?? [], type);
}
