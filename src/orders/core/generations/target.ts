// Which generation the order works towards on this pass.
import { addMilliseconds } from "date-fns/addMilliseconds";
import { isAfter } from "date-fns/isAfter";
import { childrenOf, exists } from "./children.ts";
import { windowedMoment } from "./window.ts";
import type {
  GenerationChildren,
  RotationCause,
  RotationSpec,
  RotationStatus,
  TargetDecision,
} from "./types.ts";

/** The live generation, 0 when none is live yet. */
export function liveGeneration(status: RotationStatus): number {
  return status.passwordGeneration !== undefined && status.passwordGeneration >= 1
    ? status.passwordGeneration
    : 0;
}

/** The declared generation, at least 1. */
export function declaredGeneration(spec: RotationSpec): number {
  return Math.max(1, Math.floor(spec.declaredGeneration));
}

/** A grace period runs from the switch until the sweep has cleared the previous generation. */
export function graceRunning(status: RotationStatus): boolean {
  return status.previousPasswordGeneration !== undefined && status.previousPasswordGeneration >= 1;
}

/**
 * When the next scheduled rotation starts: lastRotation + interval, or with a rotation window the order's
 * moment in the first window open at or after that time (window.ts); with `now`, a moment whose window
 * closed unused moves to a later window. Undefined with the schedule off or nothing rotated yet.
 */
export function nextRotationOf(
  spec: RotationSpec,
  lastRotation: Date | undefined,
  now?: Date,
): Date | undefined {
  if (spec.intervalMs <= 0 || lastRotation === undefined) return undefined;
  const due = addMilliseconds(lastRotation, spec.intervalMs);
  return spec.window ? windowedMoment(spec.window, spec.seed ?? "", due, now) : due;
}

/** The pieces of the live generation that are gone (an account or access child being deleted is gone). */
export function lostPieces(live: GenerationChildren): RotationCause[] {
  const lost: RotationCause[] = [];
  if (live.password !== "present") lost.push("lostPassword");
  if (!exists(live.account)) lost.push("lostAccount");
  if (!exists(live.access)) lost.push("lostAccess");
  return lost;
}

/** Whether a generation's children are on `backend` (one with neither account nor access child is anywhere). */
export function placed(c: GenerationChildren, backend: string | undefined): boolean {
  return backend === undefined || c.backend === undefined || c.backend === backend;
}

/**
 * The highest generation whose children name another backend (0: none). A new generation goes above it,
 * so that it is never minted under a name whose children another broker holds.
 */
function highestMisplaced(children: readonly GenerationChildren[], backend: string | undefined): number {
  return Math.max(0, ...children.filter((c) => !placed(c, backend)).map((c) => c.generation));
}

/** A generation above the live one whose password a validation policy refused, once a new one is due. */
function spent(c: GenerationChildren, live: number, now: Date): boolean {
  return (
    c.generation > live &&
    c.account.phase === "refused" &&
    c.account.newPasswordAt !== undefined &&
    !isAfter(c.account.newPasswordAt, now)
  );
}

/**
 * The highest spent generation (0: none). It is kept while the order has no newer live generation, so
 * that the next one goes above it; the spent ones below it are pruned.
 */
export function highestSpent(children: readonly GenerationChildren[], live: number, now: Date): number {
  return Math.max(0, ...children.filter((c) => spent(c, live, now)).map((c) => c.generation));
}

/**
 * The highest generation above the live one and every spent one whose account child exists on the
 * backend; a refused one only while the declared generation does not exceed it (a raise above it
 * abandons it).
 */
function inFlight(
  children: readonly GenerationChildren[],
  at: { above: number; declared: number; backend: string | undefined },
): number | undefined {
  const { above, declared, backend } = at;
  let highest: number | undefined;
  for (const c of children) {
    if (c.generation <= above || !exists(c.account) || !placed(c, backend)) continue;
    if (c.account.phase === "refused" && declared > c.generation) continue;
    if (highest === undefined || c.generation > highest) highest = c.generation;
  }
  return highest;
}

/**
 * `backend` is the one the ControlPlane names now (absent: every generation is on it). A live generation on
 * another is moved by a rotation to a new generation on it; a generation in flight on another is abandoned.
 * `windowAsOf` (when the pass was queued, at most now) is when a rotation window is judged closed.
 */
export function chooseTarget(
  spec: RotationSpec,
  status: RotationStatus,
  children: readonly GenerationChildren[],
  now: Date,
  backend?: string,
  windowAsOf: Date = now,
): TargetDecision {
  const declared = declaredGeneration(spec);
  const live = liveGeneration(status);
  // A new generation goes above every generation another backend holds and every spent one: a password
  // refused by a validation policy is replaced by a new password under a new generation, never reused.
  const spentAbove = highestSpent(children, live, now);
  const above = Math.max(highestMisplaced(children, backend), spentAbove) + 1;
  // Nothing delivered: the declared generation, or a higher one already in flight (a status lost with its
  // Secret must not bring back an older generation).
  if (live === 0)
    return {
      kind: "first",
      generation: Math.max(
        declared,
        inFlight(children, { above: spentAbove, declared, backend }) ?? 0,
        above,
      ),
    };

  const continued = inFlight(children, { above: Math.max(live, spentAbove), declared, backend });
  if (continued !== undefined) return { kind: "continue", generation: continued };

  const causes: RotationCause[] = [];
  if (declared > live) causes.push("declared");
  // Only the schedule waits for a rotation window; a raise, a lost piece and a move do not.
  const next = nextRotationOf(spec, status.lastRotation, windowAsOf);
  if (next !== undefined && !isAfter(next, now)) causes.push("schedule");
  const current = childrenOf(children, live);
  causes.push(...lostPieces(current));
  if (!placed(current, backend)) causes.push("moved");

  if (causes.length === 0) return { kind: "none" };
  if (graceRunning(status)) return { kind: "held", causes };
  return { kind: "rotate", generation: Math.max(declared, live + 1, above), causes };
}
