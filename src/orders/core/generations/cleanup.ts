// Removing generations: strays (pruning) and the previous generation once its grace period is over (sweep).
import { addMilliseconds } from "date-fns/addMilliseconds";
import { isAfter } from "date-fns/isAfter";
import { startOfSecond } from "date-fns/startOfSecond";
import { childrenOf, exists } from "./children.ts";
import { liveGeneration, lostPieces } from "./target.ts";
import type { ChildAction, GenerationChildren, RotationSpec, RotationStatus } from "./types.ts";

/**
 * Deletes for one generation: its Permission and User at once, its password Secret only once the User is
 * gone (the topology operator may still read the Secret while it removes the user from the broker). The
 * sweep and the pruning wait for the User's removal alone, so the Permission's and the Secret's are quiet.
 */
function removal(c: GenerationChildren): ChildAction[] {
  const n = c.generation;
  const actions: ChildAction[] = [];
  if (exists(c.permission)) actions.push({ op: "delete", kind: "permission", generation: n, quiet: true });
  if (exists(c.user)) actions.push({ op: "delete", kind: "user", generation: n });
  if (c.user.phase === "absent" && c.password !== "absent") {
    actions.push({ op: "delete", kind: "passwordSecret", generation: n, quiet: true });
  }
  return actions;
}

/** Deletes every generation outside `keep`, lowest first. */
export function pruneActions(
  children: readonly GenerationChildren[],
  keep: ReadonlySet<number>,
): ChildAction[] {
  return [...children]
    .filter((c) => !keep.has(c.generation))
    .sort((a, b) => a.generation - b.generation)
    .flatMap(removal);
}

export interface SweepResult {
  readonly actions: ChildAction[];
  readonly status: RotationStatus;
}

/**
 * The grace period of the previous generation starts now: called once every delivered Secret of the order
 * carries the live generation. A grace period already running is left alone.
 */
export function startGrace(spec: RotationSpec, status: RotationStatus, now: Date): RotationStatus {
  if (status.previousPasswordGeneration === undefined || status.previousPasswordDeleteAt !== undefined)
    return status;
  return { ...status, previousPasswordDeleteAt: startOfSecond(addMilliseconds(now, spec.gracePeriodMs)) };
}

/** Status times carry whole seconds, as a metav1.Time does. */
export function wholeSeconds(ms: number): Date {
  return startOfSecond(ms);
}

/**
 * After previousPasswordDeleteAt, in two passes: first the previous Permission and User are deleted; on a
 * pass that finds the User gone, its password Secret is deleted and the previous* fields are cleared.
 * A previous generation without a delete time waits: its grace period starts once the delivered Secret
 * carries the live generation (startGrace). Only when a piece of the live generation is gone, so that it
 * can never be delivered, does the grace period start at once.
 */
export function sweepPrevious(
  spec: RotationSpec,
  status: RotationStatus,
  children: readonly GenerationChildren[],
  now: Date,
): SweepResult {
  const previous = status.previousPasswordGeneration;
  if (previous === undefined || previous < 1) return { actions: [], status };
  const cleared = { ...status, previousPasswordGeneration: undefined, previousPasswordDeleteAt: undefined };
  if (previous === liveGeneration(status)) return { actions: [], status: cleared };
  if (status.previousPasswordDeleteAt === undefined) {
    const live = childrenOf(children, liveGeneration(status));
    return { actions: [], status: lostPieces(live).length > 0 ? startGrace(spec, status, now) : status };
  }
  if (isAfter(status.previousPasswordDeleteAt, now)) return { actions: [], status };
  const c = childrenOf(children, previous);
  const actions = removal(c);
  return { actions, status: c.user.phase === "absent" ? cleared : status };
}
