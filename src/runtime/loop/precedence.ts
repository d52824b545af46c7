import type { Clock, Timer } from "../base/clock.ts";
import type { Rank } from "./lanes.ts";

// Urgent work before routine work across the controllers of one process. Each controller's lanes hand
// out their own urgent keys first (lanes.ts), but the controllers share one event loop and one garbage
// collector: a restart's thousands of routine checks, answered from memory, fill every turn of the
// loop, and each step of a new order's passes (an API call, a broker call) waits behind them.
//
// So while urgent work is fresh (a pass ranked urgent started within the last `holdMs`, in any
// controller), routine passes start one at a time across the process and at most one per `paceMs`,
// each handing over to the next through a timer. The hold outlives the urgent pass on purpose: an
// order's passes follow each other through watch events, and the gaps between them must not let a
// turn's worth of routine passes in.
//
// A routine pass older than `holdMs` is waiting on an endpoint rather than using the CPU: it no longer
// takes the single place. So a hung broker never stops the routine checks, and a stream of urgent work
// only slows them, to one per `paceMs` at the least.

export interface PrecedenceTimings {
  /** How long an urgent pass's start holds the routine passes back. */
  holdMs: number;
  /** While they are held back, the least time between two routine passes' starts. */
  paceMs: number;
}

export class Precedence {
  private readonly clock: Clock;
  private readonly holdMs: number;
  private readonly paceMs: number;
  /** Monotonic time until which routine passes go single file. */
  private urgentUntil = -Infinity;
  /** Start times of the routine passes running now, by pass. */
  private readonly routine = new Map<symbol, number>();
  private lastRoutineStart = -Infinity;
  private readonly waiting = new Set<() => void>();
  private timer: { at: number; timer: Timer } | undefined;
  /** Whether a routine pass was held back since the queues were last woken. */
  private held = false;
  /** A routine pass held back ended: the next one starts once the queues are woken, not before. */
  private handingOver = false;
  private turn = 0;

  constructor(clock: Clock, timings: PrecedenceTimings) {
    if (!(timings.holdMs > 0)) throw new Error("the hold of urgent work must be positive");
    if (!(timings.paceMs >= 0)) throw new Error("the pace of routine work must not be negative");
    this.clock = clock;
    this.holdMs = timings.holdMs;
    this.paceMs = timings.paceMs;
  }

  /** Whether a routine pass may start now; when not, the subscribers are called once it may. */
  routineMayStart(): boolean {
    const now = this.clock.monotonic();
    if (now >= this.urgentUntil) return true;
    if (this.handingOver) return false;
    const running = this.oldestFresh(now);
    const paced = this.lastRoutineStart + this.paceMs;
    if (running === undefined && paced <= now) return true;
    // The queues are woken when the hold ends, or the single place is free (the routine pass in it ages
    // out, or ends: earlier) and the pace lets the next one in, whichever comes first.
    this.held = true;
    const freed = Math.max(paced, running === undefined ? now : running + this.holdMs);
    this.wakeAt(Math.min(this.urgentUntil, freed) - now);
    return false;
  }

  /** A pass ranked `rank` starts now; the function returned is called when it ends. */
  started(rank: Rank): () => void {
    const now = this.clock.monotonic();
    if (rank === "urgent") {
      this.urgentUntil = Math.max(this.urgentUntil, now + this.holdMs);
      return () => {};
    }
    this.lastRoutineStart = now;
    const pass = Symbol();
    this.routine.set(pass, now);
    // While routine passes are held back, one that ends hands over to the next through a timer, not at
    // once (its own queue's next worker would start in the same turn of the event loop): the urgent
    // passes' replies get their turn in between.
    return () => {
      this.routine.delete(pass);
      if (!this.held) return;
      this.handingOver = true;
      this.wakeAt(Math.min(this.urgentUntil, this.lastRoutineStart + this.paceMs) - this.clock.monotonic());
    };
  }

  /** `dispatch` is called whenever routine work held back may start; the function returned unsubscribes. */
  subscribe(dispatch: () => void): () => void {
    this.waiting.add(dispatch);
    return () => this.waiting.delete(dispatch);
  }

  /** The start of the oldest routine pass running that started within the last `holdMs`. */
  private oldestFresh(now: number): number | undefined {
    let oldest: number | undefined;
    for (const since of this.routine.values()) {
      if (now - since < this.holdMs) oldest = Math.min(oldest ?? since, since);
    }
    return oldest;
  }

  private wakeAt(ms: number): void {
    const at = this.clock.monotonic() + Math.max(0, ms);
    if (this.timer && this.timer.at <= at) return;
    this.timer?.timer.cancel();
    this.timer = { at, timer: this.clock.setTimer(() => this.wake(), Math.max(0, ms)) };
  }

  /** The queues are woken from a different one each time: the first woken takes the single place. */
  private wake(): void {
    this.timer = undefined;
    this.held = false;
    this.handingOver = false;
    const queues = [...this.waiting];
    const first = this.turn++ % Math.max(1, queues.length);
    for (const dispatch of [...queues.slice(first), ...queues.slice(0, first)]) dispatch();
  }
}
