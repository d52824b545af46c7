// What a mutating plugin returns must still be the kind: it matches the kind's zod schema and adds no
// field the schema does not know (the schemas strip unknown fields, so a field missing after parsing
// is a new one). An entry changes the spec only: metadata and status are the operator's.
import type { z } from "zod";
import { deepEqual } from "../runtime/base/conditions.ts";
import type { GatedKind } from "./kinds.ts";

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Date);

/** The paths of `input` that its parsed form lacks: fields the schema does not know. */
export function addedFields(input: unknown, parsed: unknown, path = ""): string[] {
  if (Array.isArray(input) && Array.isArray(parsed)) {
    return input.flatMap((item, i) => addedFields(item, parsed[i], `${path}[${i}]`));
  }
  if (!isRecord(input) || !isRecord(parsed)) return [];
  return Object.entries(input).flatMap(([key, value]) => {
    const at = path ? `${path}.${key}` : key;
    if (value === undefined) return [];
    if (!(key in parsed)) return [at];
    return addedFields(value, parsed[key], at);
  });
}

/** Why `value` is not a valid `schema` value with no new fields; undefined when it is. */
export function schemaProblem(schema: z.ZodType, value: unknown): string | undefined {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `${issue?.path.join(".") || "the value"}: ${issue?.message ?? "invalid"}`;
  }
  const added = addedFields(value, parsed.data);
  return added.length > 0 ? `new fields are not allowed: ${added.join(", ")}` : undefined;
}

/** Why a mutating entry's output cannot be used for the pass; undefined when it can. */
export function entryOutputProblem(kind: GatedKind, before: unknown, after: unknown): string | undefined {
  if (!isRecord(after)) return "it returned no object";
  const problem = schemaProblem(kind.schema, after);
  if (problem) return problem;
  const was = before as Record<string, unknown>;
  for (const field of ["apiVersion", "kind", "metadata", "status"]) {
    if (!deepEqual(was[field], after[field])) return `it changed ${field}, and only the spec may change`;
  }
  return undefined;
}

/** Why a mutating exit's status cannot be written; undefined when it can. */
export function exitOutputProblem(kind: GatedKind, status: unknown): string | undefined {
  if (!isRecord(status)) return "it returned no status";
  return schemaProblem(kind.statusSchema, status);
}
