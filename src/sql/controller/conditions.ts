// Status as seed 002 has it: one list of metav1.Condition with a condition of type Ready, its reason
// Reconciled, ReconcileError or NotOwned. lastTransitionTime moves only when the status changes, so a
// pass that only refreshes the message leaves it alone; observedGeneration sits in the condition.
import { SqlReason } from "../../api/index.ts";
import { mergeConditions, type Condition, type DesiredCondition } from "../../runtime/base/conditions.ts";

/** The reasons live in the API, where the orders that read these kinds find them too. */
export const Reason = SqlReason;

export const ready = (message: string): DesiredCondition => ({
  type: "Ready",
  status: "True",
  reason: Reason.Reconciled,
  message,
});

export const notReady = (message: string, reason: string = Reason.ReconcileError): DesiredCondition => ({
  type: "Ready",
  status: "False",
  reason,
  message,
});

export interface SqlStatus {
  conditions?: Condition[] | undefined;
}

/** The status after a pass: `conditions` (Ready) set; other conditions (someone else's) kept after them. */
export function nextStatus(
  current: SqlStatus | undefined,
  conditions: readonly DesiredCondition[],
  generation: number | undefined,
  nowMs: number,
): SqlStatus {
  const previous = current?.conditions ?? [];
  const merged = mergeConditions(previous, [...conditions], generation, nowMs);
  const others = previous.filter((c) => !conditions.some((d) => d.type === c.type));
  return { ...current, conditions: [...merged, ...others] };
}
