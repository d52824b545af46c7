// Status decisions as pure functions: a status is written only when it differs from what is
// stored, a condition keeps its lastTransitionTime while its status stays the same, and
// observedGeneration always follows the generation the status was computed from.
import { byCodeUnits } from "./code-units.ts";
import { rfc3339 } from "./time.ts";

export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

export type DesiredCondition = Omit<Condition, "lastTransitionTime" | "observedGeneration">;

export interface StatusWithConditions {
  observedGeneration?: number;
  conditions?: Condition[];
  [field: string]: unknown;
}

/** Kubernetes' time format for conditions: seconds precision, UTC. */
export function conditionTime(ms: number): string {
  return rfc3339(ms);
}

export function mergeConditions(
  current: Condition[] | undefined,
  desired: DesiredCondition[],
  generation: number | undefined,
  nowMs: number,
): Condition[] {
  return desired.map((d) => {
    const previous = current?.find((c) => c.type === d.type);
    const lastTransitionTime =
      previous && previous.status === d.status && previous.lastTransitionTime
        ? previous.lastTransitionTime
        : conditionTime(nowMs);
    return {
      ...d,
      lastTransitionTime,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    };
  });
}

/** The status to store, and whether it differs from the stored one. */
export function nextStatus(
  current: StatusWithConditions | undefined,
  desired: { conditions: DesiredCondition[]; [field: string]: unknown },
  generation: number | undefined,
  nowMs: number,
): { status: StatusWithConditions; changed: boolean } {
  const { conditions, ...fields } = desired;
  const status: StatusWithConditions = {
    ...fields,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    conditions: mergeConditions(current?.conditions, conditions, generation, nowMs),
  };
  return { status, changed: !deepEqual(normalise(current ?? {}), normalise(status)) };
}

/** The conditions whose status or reason changed; the only moments that deserve an event. */
export function conditionTransitions(
  before: Condition[] | undefined,
  after: DesiredCondition[],
): { condition: DesiredCondition; previous: Condition | undefined }[] {
  return after
    .map((condition) => ({ condition, previous: before?.find((c) => c.type === condition.type) }))
    .filter(
      ({ condition, previous }) =>
        !previous || previous.status !== condition.status || previous.reason !== condition.reason,
    );
}

// Order of conditions and of object keys is not a change.
function normalise(status: StatusWithConditions): unknown {
  const conditions = [...(status.conditions ?? [])].sort((a, b) => byCodeUnits(a.type, b.type));
  return { ...status, conditions };
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
