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

/** A condition a pass sets; its time and generation are the status's business. */
export interface DesiredCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
}

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

/**
 * How a status is written beyond the conditions a pass sets. The defaults are the runtime's own: the
 * stored fields and the conditions the pass does not set are dropped, and the generation goes on the
 * status and in each condition set.
 */
export interface StatusRules {
  /** The stored fields and conditions the pass does not set (someone else's) stay, each in its place. */
  keepOthers?: boolean;
  /** Where observedGeneration is written. */
  generationAt?: "status" | "conditions" | "both";
  /** An empty message is left out, as upstream's omitempty does. */
  omitEmptyMessage?: boolean;
}

/** The status to store, and whether it differs from the stored one. */
export function nextStatus(
  current: StatusWithConditions | undefined,
  desired: { conditions: DesiredCondition[]; [field: string]: unknown },
  generation: number | undefined,
  nowMs: number,
  rules: StatusRules = {},
): { status: StatusWithConditions; changed: boolean } {
  const { conditions, ...fields } = desired;
  const at = rules.generationAt ?? "both";
  const inConditions = at === "status" ? undefined : generation;
  const merged = mergeConditions(current?.conditions, conditions, inConditions, nowMs).map((c) =>
    rules.omitEmptyMessage && !c.message ? withoutMessage(c) : c,
  );
  const stored = current?.conditions ?? [];
  const status: StatusWithConditions = {
    ...(rules.keepOthers ? current : {}),
    ...fields,
    ...(generation !== undefined && at !== "conditions" ? { observedGeneration: generation } : {}),
    conditions: rules.keepOthers ? inPlace(stored, merged) : merged,
  };
  return { status, changed: !deepEqual(normalise(current ?? {}), normalise(status)) };
}

/** Written without its message; read back, a missing message is an empty one. */
function withoutMessage({ message: _message, ...rest }: Condition): Condition {
  return rest as Condition;
}

/** `stored` with each of `merged` in its place (the others as they are), the new ones after. */
function inPlace(stored: readonly Condition[], merged: readonly Condition[]): Condition[] {
  const kept = stored.map((c) => merged.find((m) => m.type === c.type) ?? { ...c });
  return [...kept, ...merged.filter((m) => !stored.some((c) => c.type === m.type))];
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
