// The requeue policy of the order reconciler, in one place. Each step of a pass, a teardown or a sweep
// of an absent order's leftovers says when it wants to be looked at again (a Wake); one rule merges
// them: the earliest wait wins, but never below the floor of the situation that asked for it, and a
// backoff (a retried error) wins over every wait. An order on a target cluster is looked at again within
// 10 minutes whatever it waits for (its refresh wake). The runtime's Result is made here and nowhere else.
import type { Result } from "../../runtime/loop/controller.ts";
import { TransientError } from "../../runtime/base/errors.ts";
import { REQUEUE } from "./conditions.ts";

/** Why a step wants another pass; each reason has its floor. */
export type WakeReason =
  /** A gate is closed (consent, backend, secret store, delivery). */
  | "gate"
  /** Waiting for a child to become Ready, or for a child's removal. */
  | "waiting"
  /** A deadline in the future: a rotation, a sweep, the removal of an absent order's leftovers. */
  | "deadline"
  /** A deadline already past: the step that acts on it is under way; its children's events wake the order. */
  | "pastDeadline"
  /** The backend refused the successor, or a login as the successor. */
  | "refused"
  /** The backend kind is not served. */
  | "notServed"
  /** An order on a target cluster, whose changes of its ControlPlane no watch reports. */
  | "refresh";

export type Wake =
  | { kind: "after"; ms: number; why: WakeReason }
  /** Retried as a transient failure after the status is written: after `ms`, or the runtime's interval. */
  | { kind: "backoff"; message: string; ms?: number | undefined; cause?: unknown }
  | { kind: "none" };

/** The shortest requeue each reason may ask for. */
export const FLOORS: Record<WakeReason, number> = {
  gate: 1_000,
  waiting: 1_000,
  deadline: 1_000,
  pastDeadline: REQUEUE.short,
  refused: REQUEUE.short,
  notServed: REQUEUE.long,
  refresh: REQUEUE.long,
};

/**
 * How long a pass waiting for a child waits at most for the watch event that should wake it. The
 * watches report every change a wait can end on (a child's status, its removal), so this is only a
 * backstop; a shorter one made a thousand waiting orders pass a hundred times a second for nothing.
 */
export const WAITING_FALLBACK_MS = 5 * 60_000;

export const after = (ms: number, why: WakeReason): Wake => ({ kind: "after", ms, why });
export const none: Wake = { kind: "none" };
/** A retried failure: its message is the error's, `ms` its own interval instead of the runtime's. */
export const backoff = (message: string, ms?: number, cause?: unknown): Wake => ({
  kind: "backoff",
  message,
  ms,
  cause,
});

/** An order on a target cluster is looked at again every 10 minutes at the latest; one here is not. */
export const refreshOf = (cluster: string): Wake => (cluster === "" ? none : after(REQUEUE.long, "refresh"));

/** The merged wakes: undefined (wait for an event), a delay, or a backoff to throw. */
export type Decision = {
  requeueAfterMs?: number | undefined;
  backoff?: Extract<Wake, { kind: "backoff" }> | undefined;
};

export function decideRequeue(wakes: readonly Wake[]): Decision {
  const retried = wakes.find((w): w is Extract<Wake, { kind: "backoff" }> => w.kind === "backoff");
  if (retried) return { backoff: retried };
  const delays = wakes
    .filter((w): w is Extract<Wake, { kind: "after" }> => w.kind === "after")
    .map((w) => Math.max(w.ms, FLOORS[w.why]));
  return { requeueAfterMs: delays.length === 0 ? undefined : Math.min(...delays) };
}

/** The runtime's Result of a decision: a backoff is thrown as a transient failure. */
export function resultOf(decision: Decision): Result {
  const { backoff: retried } = decision;
  if (retried) throw new TransientError(retried.message, { retryAfterMs: retried.ms, cause: retried.cause });
  return { requeueAfterMs: decision.requeueAfterMs };
}

/**
 * The wait after a refused successor: 10 s, doubling with every refusal in a row, up to the cap (the
 * runtime's transient interval). Per process: a restart starts again at 10 s.
 */
export class SuccessorBackoff {
  private readonly refusals = new Map<string, number>();

  refused(key: string, capMs: number): number {
    const n = (this.refusals.get(key) ?? 0) + 1;
    this.refusals.set(key, n);
    return Math.min(FLOORS.refused * 2 ** (n - 1), Math.max(capMs, FLOORS.refused));
  }

  forget(key: string): void {
    this.refusals.delete(key);
  }
}
