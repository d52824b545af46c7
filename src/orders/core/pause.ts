// A paused order (annotation `c5c3.io/paused: "true"`, as Crossplane and Strimzi pause theirs): nothing
// is provisioned, rotated, swept or delivered again until the annotation goes; the resource condition
// keeps the status and reason it had and ends with a note that says so. Removing the annotation is a
// metadata change, which brings a pass at once.
import { PAUSED_ANNOTATION } from "../../api/contracts.ts";
import { CoreReason, coreMessages } from "./conditions.ts";
import type { ConditionState } from "./types.ts";
import type { OrderObject } from "./kind.ts";

/** The resource condition of a paused order; undefined when it is not paused. */
export function pausedCondition(order: OrderObject, resourceCondition: string): ConditionState | undefined {
  if (order.metadata.annotations?.[PAUSED_ANNOTATION] !== "true") return undefined;
  const before = order.status?.conditions?.find((c) => c.type === resourceCondition);
  const note = coreMessages.paused(PAUSED_ANNOTATION);
  const suffix = `; ${note}`;
  const said = before?.message ?? "";
  const kept = said.endsWith(suffix) ? said.slice(0, -suffix.length) : said === note ? "" : said;
  return {
    status: (before?.status ?? "Unknown") as ConditionState["status"],
    reason: before?.reason ?? CoreReason.Paused,
    message: kept ? `${kept}${suffix}` : note,
  };
}
