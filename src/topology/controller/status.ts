// Writes a topology object's status through the /status subresource, and only when it changed:
// a pass that changes nothing writes nothing (no timestamp-only writes, upstream issue 250). A written
// condition that changed status or reason is also reported as an event.
import type { KindRef, ObjectMeta } from "../../api/index.ts";
import { nextStatus, statusDiffers, type Condition, type StatusFields } from "./conditions.ts";
import type { ControllerDeps } from "./deps.ts";
import { isKubeStatus, patchStatus } from "./kube.ts";

export type ConditionUpdate = Omit<Condition, "lastTransitionTime">;

export interface StatusTarget {
  metadata: ObjectMeta;
  status?: unknown;
}

/** Puts `updates` (and on success the generation and `fields`) into the status; returns whether it wrote. */
export async function writeStatus(
  deps: ControllerDeps,
  kind: KindRef,
  object: StatusTarget,
  updates: readonly ConditionUpdate[],
  success?: { fields?: Record<string, unknown> },
): Promise<boolean> {
  const current = object.status as StatusFields | undefined;
  const next = nextStatus(
    current,
    updates,
    new Date(deps.clock.now()),
    success && { generation: object.metadata.generation, fields: success.fields },
  );
  if (!statusDiffers(current, next)) return false;
  try {
    await patchStatus(deps, kind, object.metadata.namespace ?? "", object.metadata.name ?? "", next);
  } catch (error) {
    // Deleted meanwhile: there is no status left to keep.
    if (isKubeStatus(error, 404)) return false;
    throw error;
  }
  object.status = next;
  await deps.events?.record(kind, object, current?.conditions, next.conditions ?? []);
  return true;
}
