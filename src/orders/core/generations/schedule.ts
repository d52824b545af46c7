// The switch to a new generation and the next deadline.
import { differenceInMilliseconds } from "date-fns/differenceInMilliseconds";
import { isAfter } from "date-fns/isAfter";
import { wholeSeconds } from "./cleanup.ts";
import { graceRunning, liveGeneration, nextRotationOf } from "./target.ts";
import type { RotationSpec, RotationStatus } from "./types.ts";

/**
 * The status after generation N becomes the delivered one: the live generation (if any) becomes the
 * previous one, deleted a grace period after the delivered Secret switched (startGrace sets the time);
 * the schedule restarts from now (not from the due time).
 */
export function switchStatus(spec: RotationSpec, status: RotationStatus, generation: number, now: Date) {
  const at = wholeSeconds(now.getTime());
  const live = liveGeneration(status);
  const next: RotationStatus = {
    passwordGeneration: generation,
    lastRotation: at,
    nextRotation: nextRotationOf(spec, at),
    previousPasswordGeneration: live > 0 ? live : undefined,
    previousPasswordDeleteAt: undefined,
  };
  return next;
}

/**
 * Milliseconds until the next deadline, or undefined when none is pending. The deadline is
 * previousPasswordDeleteAt while a grace period runs (no rotation can start before the sweep anyway),
 * nextRotation otherwise; a passed deadline gives 0.
 */
export function untilDeadline(status: RotationStatus, now: Date): number | undefined {
  const deadline = graceRunning(status) ? status.previousPasswordDeleteAt : status.nextRotation;
  return deadline === undefined ? undefined : Math.max(0, differenceInMilliseconds(deadline, now));
}

/**
 * The grace period is over and the previous generation is being removed. The removal of its access and
 * account children wakes the order through the children's watch, so the passed deadline need not poll
 * it: with a thousand orders sweeping behind a busy topology controller, that poll was most of the passes.
 */
export function sweepUnderWay(status: RotationStatus, now: Date): boolean {
  const deleteAt = status.previousPasswordDeleteAt;
  return graceRunning(status) && deleteAt !== undefined && !isAfter(deleteAt, now);
}
