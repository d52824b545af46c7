// Which generation is delivered, from evidence rather than memory. The delivered Secret beside the order
// names its user, so a status that was lost (an etcd or backup restore without status, a CRD migration,
// a wipe), restored from an older snapshot, or written ahead of its delivery never decides which
// generation may go: a generation a delivered Secret carries is never deleted.
import { addMilliseconds } from "date-fns/addMilliseconds";
import { startOfSecond } from "date-fns/startOfSecond";
import { exists } from "./children.ts";
import type { DeliveredEvidence, GenerationChildren, RotationSpec, RotationStatus } from "./types.ts";

/**
 * The rotation status as the evidence has it. Where the status agrees with the delivered Secret it stands.
 * Where it does not, the Secret's generation is the live one; the highest lower generation whose account
 * child still exists is its predecessor, in a grace period that runs from now (a consumer may still use it:
 * nothing says it reloaded), or from the status's delete time where the status already named it. A
 * higher generation is a successor in flight, continued by the plan. The schedule starts afresh, since
 * when the live user became the delivered one is not known.
 */
export function fromEvidence(
  spec: RotationSpec,
  status: RotationStatus,
  children: readonly GenerationChildren[],
  evidence: DeliveredEvidence,
  now: Date,
): RotationStatus {
  if (evidence.kind !== "carries" || evidence.generation === status.passwordGeneration) return status;
  const live = evidence.generation;
  const lower = children
    .filter((c) => c.generation < live && exists(c.account))
    .reduce<number | undefined>(
      (top, c) => (top === undefined || c.generation > top ? c.generation : top),
      undefined,
    );
  const deleteAt =
    lower === undefined
      ? undefined
      : lower === status.previousPasswordGeneration && status.previousPasswordDeleteAt !== undefined
        ? status.previousPasswordDeleteAt
        : startOfSecond(addMilliseconds(now, spec.gracePeriodMs));
  return {
    passwordGeneration: live,
    lastRotation: undefined,
    nextRotation: undefined,
    previousPasswordGeneration: lower,
    previousPasswordDeleteAt: deleteAt,
  };
}
