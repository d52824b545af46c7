// Comparisons for read backs: JSON values by content, tag lists as sets.
import { canonicalJson } from "../../runtime/base/desired-state.ts";

export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

export function sameTags(a: readonly string[], b: readonly string[]): boolean {
  return sameJson([...new Set(a)].sort(), [...new Set(b)].sort());
}
