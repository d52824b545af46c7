// The requeue policy of an order pass, in one place. Each step of a pass says when it wants to be
// looked at again (a Wake); one rule merges them: the earliest wait wins, but never below the floor of
// the situation that asked for it, and a backoff (a retried error) wins over every wait. An order on a
// target cluster is looked at again within 10 minutes whatever it waits for.
import { REQUEUE } from "./conditions.ts";

/** Why a step wants another pass; each reason has its floor. */
export type WakeReason =
  /** A gate is closed (consent, backend, secret store, delivery). */
  | "gate"
  /** Waiting for a child to become Ready, or for a child's removal. */
  | "waiting"
  /** A rotation or sweep deadline in the future. */
  | "deadline"
  /** A deadline already past: the step that acts on it is under way; its children's events wake the order. */
  | "pastDeadline"
  /** The backend refused the successor, or a login as the successor. */
  | "refused"
  /** The backend kind is not served. */
  | "notServed";

export type Wake =
  | { kind: "after"; ms: number; why: WakeReason }
  /** Retried as a transient failure after the status is written: after `ms`, or the runtime's interval. */
  | { kind: "backoff"; message: string; ms?: number | undefined }
  | { kind: "none" };

/** The shortest requeue each reason may ask for. */
export const FLOORS: Record<WakeReason, number> = {
  gate: 1_000,
  waiting: 1_000,
  deadline: 1_000,
  pastDeadline: REQUEUE.short,
  refused: REQUEUE.short,
  notServed: REQUEUE.long,
};

/**
 * How long a pass waiting for a child waits at most for the watch event that should wake it. The
 * watches report every change a wait can end on (a child's status, its removal), so this is only a
 * backstop; a shorter one made a thousand waiting orders pass a hundred times a second for nothing.
 */
export const WAITING_FALLBACK_MS = 5 * 60_000;

export const after = (ms: number, why: WakeReason): Wake => ({ kind: "after", ms, why });
export const none: Wake = { kind: "none" };

/** The requeue of a pass: undefined (wait for an event), a delay, or a backoff message to throw. */
export type Decision = {
  requeueAfterMs?: number | undefined;
  backoff?: string | undefined;
  backoffMs?: number | undefined;
};

export function decideRequeue(wakes: readonly Wake[], cluster: string): Decision {
  const backoff = wakes.find((w): w is Extract<Wake, { kind: "backoff" }> => w.kind === "backoff");
  if (backoff) return { backoff: backoff.message, backoffMs: backoff.ms };
  const delays = wakes
    .filter((w): w is Extract<Wake, { kind: "after" }> => w.kind === "after")
    .map((w) => Math.max(w.ms, FLOORS[w.why]));
  let ms = delays.length === 0 ? undefined : Math.min(...delays);
  if (cluster !== "") ms = Math.min(ms ?? REQUEUE.long, REQUEUE.long);
  return { requeueAfterMs: ms };
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
