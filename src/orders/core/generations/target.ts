// Which generation the order works towards on this pass.
import { addMilliseconds } from "date-fns/addMilliseconds";
import { isAfter } from "date-fns/isAfter";
import { childrenOf, exists } from "./children.ts";
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

/** lastRotation + interval; undefined with the schedule off or nothing rotated yet. */
export function nextRotationOf(spec: RotationSpec, lastRotation: Date | undefined): Date | undefined {
  if (spec.intervalMs <= 0 || lastRotation === undefined) return undefined;
  return addMilliseconds(lastRotation, spec.intervalMs);
}

/** The pieces of the live generation that are gone (an account or access child being deleted is gone). */
export function lostPieces(live: GenerationChildren): RotationCause[] {
  const lost: RotationCause[] = [];
  if (live.password !== "present") lost.push("lostPassword");
  if (!exists(live.account)) lost.push("lostAccount");
  if (!exists(live.access)) lost.push("lostAccess");
  return lost;
}

/**
 * The highest generation above the live one whose account child exists; a refused one only while the declared
 * generation does not exceed it (a raise above it abandons it).
 */
function inFlight(
  children: readonly GenerationChildren[],
  live: number,
  declared: number,
): number | undefined {
  let highest: number | undefined;
  for (const c of children) {
    if (c.generation <= live || !exists(c.account)) continue;
    if (c.account.phase === "refused" && declared > c.generation) continue;
    if (highest === undefined || c.generation > highest) highest = c.generation;
  }
  return highest;
}

export function chooseTarget(
  spec: RotationSpec,
  status: RotationStatus,
  children: readonly GenerationChildren[],
  now: Date,
): TargetDecision {
  const declared = declaredGeneration(spec);
  const live = liveGeneration(status);
  // Nothing delivered: the declared generation, or a higher one already in flight (a status lost with its
  // Secret must not bring back an older generation).
  if (live === 0)
    return { kind: "first", generation: Math.max(declared, inFlight(children, 0, declared) ?? 0) };

  const continued = inFlight(children, live, declared);
  if (continued !== undefined) return { kind: "continue", generation: continued };

  const causes: RotationCause[] = [];
  if (declared > live) causes.push("declared");
  const next = nextRotationOf(spec, status.lastRotation);
  if (next !== undefined && !isAfter(next, now)) causes.push("schedule");
  causes.push(...lostPieces(childrenOf(children, live)));

  if (causes.length === 0) return { kind: "none" };
  if (graceRunning(status)) return { kind: "held", causes };
  return { kind: "rotate", generation: Math.max(declared, live + 1), causes };
}
