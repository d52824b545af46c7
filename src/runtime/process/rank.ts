// How soon an object's pass is needed, read from the object as the cache holds it: work it needs now
// (not in the cache yet, being deleted, never converged, its spec changed since it last converged, a
// deadline of its own status come: `due`) is urgent; a check of an object whose status says it
// converged on its current spec is routine. The event that brought the request does not count: a
// restart's add of a converged object is routine, a resync's of a failing one urgent, and so is the
// timer of a converged order whose rotation moment came (a rotation window loses the moments its
// queue hands out after the window closed).
import type { Rank } from "../loop/lanes.ts";
import type { PrecedenceTimings } from "../loop/precedence.ts";
import type { KubeObject } from "../port/kube-rest.ts";

/** The queue's floor on a routine key's wait: past it, routine and urgent keys take turns (lanes.ts). */
export const RANK_AGE_FLOOR_MS = 10_000;

/**
 * How the process's routine passes give way to urgent ones (precedence.ts): for a second after an
 * urgent pass starts (longer than an order's pass under load and the watch events between its passes),
 * one at a time and at most 50 a second.
 */
export const PRECEDENCE: PrecedenceTimings = { holdMs: 1_000, paceMs: 20 };

interface Converged {
  observedGeneration?: unknown;
  conditions?: { type?: unknown; status?: unknown }[];
}

export function rankOf(object: KubeObject | undefined, due = false): Rank {
  if (!object || object.metadata?.deletionTimestamp || due) return "urgent";
  const status = object["status"] as Converged | undefined;
  const ready = status?.conditions?.find((c) => c.type === "Ready");
  const current = status?.observedGeneration === object.metadata?.generation;
  return current && ready?.status === "True" ? "routine" : "urgent";
}
