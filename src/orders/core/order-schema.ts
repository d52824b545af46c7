// An order as its kind's schema reads it, and an order the schema refuses: stored before a bound
// existed (a passwordGeneration above 10^15), or written past the CRD. Such an order cannot be
// reconciled, but it can always be deleted: the fields the schema refuses are dropped, so that the
// teardown reads what the rest of the spec says (controlPlaneRef, deletionPolicy) and the defaults for
// what was dropped (a deletionPolicy dropped is Retain, which deletes no data).
import type { z } from "zod";
import { mergeConditions } from "../../runtime/base/conditions.ts";
import { notOk, READY, type Condition } from "./conditions.ts";
import type { ConditionState } from "./types.ts";
import { HealthReason, RECONCILING, STALLED } from "./health.ts";
import type { OrderKind, OrderObject, OrderStatus, ParsedOrder } from "./kind.ts";
import { windowIssues, withDefaultsResolvable } from "./spec.ts";
import { previousConditions } from "./status.ts";

/** A field the schema refuses, e.g. `spec.passwordGeneration`, and why. */
export interface SchemaIssue {
  path: string;
  message: string;
}

/**
 * The order read with `schema`, its defaults resolved (spec.ts), or what the schema refuses; a rotation
 * window the runtime cannot use (spec.ts, windowIssues) is refused as the schema's own fields are.
 */
export function parseOrder(schema: z.ZodType, raw: unknown): ParsedOrder {
  const parsed = schema.safeParse(withDefaultsResolvable(raw));
  if (parsed.success) {
    const order = parsed.data as OrderObject;
    const issues = windowIssues(order.spec);
    return issues.length > 0 ? { issues } : { order };
  }
  return {
    issues: parsed.error.issues.map((i) => ({
      path: i.path.map(String).join("."),
      message: i.message,
    })),
  };
}

/**
 * The order, or, when the schema refuses it, the order without the spec and status fields it refuses
 * (each top-level field an issue names), with those issues. No order when that is not readable either
 * (a metadata or a controlPlaneRef the schema refuses).
 */
export function readOrder(
  kind: Pick<OrderKind, "parse">,
  raw: unknown,
): { order: OrderObject | undefined; issues: SchemaIssue[] } {
  const read = kind.parse(raw);
  if (read.order) return { order: read.order, issues: [] };
  const object = (raw ?? {}) as Record<string, unknown>;
  const without = (part: "spec" | "status") => {
    const fields = { ...(object[part] as Record<string, unknown> | undefined) };
    for (const issue of read.issues) {
      const [top, field] = issue.path.split(".");
      if (top === part && field !== undefined) delete fields[field];
    }
    return fields;
  };
  const rest = kind.parse({ ...object, spec: without("spec"), status: without("status") });
  return { order: rest.order, issues: read.issues };
}

/** What the schema refuses, for a message: `spec.passwordGeneration: Too big: …; …`. */
export function issuesText(issues: readonly SchemaIssue[]): string {
  return issues.map((i) => `${i.path || "(object)"}: ${i.message}`).join("; ");
}

/**
 * The status of an order whose pass cannot run: Ready False and Stalled True with `reason`, Reconciling
 * False; every other field keeps what the order holds as stored (`stored`), refused fields included, so
 * that the write changes nothing but the conditions.
 */
export function stalledStatus(
  stored: OrderStatus | undefined,
  why: ConditionState & { status: "False" },
  generation: number,
  nowMs: number,
): OrderStatus {
  const previous = previousConditions(stored);
  const desired = [
    { type: READY, ...why },
    {
      type: RECONCILING,
      ...notOk(HealthReason.Stalled, `retried, but ${READY} needs a person first (see Stalled)`),
    },
    { type: STALLED, status: "True" as const, reason: why.reason, message: why.message },
  ];
  const merged = mergeConditions(previous, desired, generation, nowMs) as Condition[];
  const others = previous.filter((c) => !desired.some((d) => d.type === c.type));
  return { ...stored, conditions: [...others, ...merged] };
}
