import type { Clock, Timer } from "../base/clock.ts";
import type { Rank } from "./lanes.ts";

// Urgent work before routine work across the controllers of one process. Each controller's lanes hand
// out their own urgent keys first (lanes.ts), but the controllers share one event loop: a restart's
// thousands of routine checks, answered from memory, fill every turn of it, and each step of a new
// order's passes (an API call, a broker call) waits behind a turn's worth of them in every controller.
//
// So while urgent work is fresh (a pass ranked urgent started within the last `holdMs`, in any
// controller), routine passes start one at a time across the process. The hold outlives the urgent
// pass a little on purpose: an order's passes follow each other through watch events, and the gaps
// between them must not let a turn's worth of routine passes in. A pass older than `holdMs` is waiting
// on an endpoint rather than using the CPU: an urgent one no longer holds the routine work back, and a
// routine one no longer takes the single place, so neither a hung broker nor a stream of urgent work
// ever stops the routine checks; they only go single file.

export class Precedence {
  private readonly clock: Clock;
  private readonly holdMs: number;
  /** Monotonic time until which routine passes go single file. */
  private urgentUntil = -Infinity;
  /** Start times of the routine passes running now, by pass. */
  private readonly routine = new Map<symbol, number>();
  private readonly waiting = new Set<() => void>();
  private timer: { at: number; timer: Timer } | undefined;
  /** Whether a routine pass was held back since the queues were last woken. */
  private held = false;
  /** A routine pass held back ended: the next one starts once the queues are woken, not before. */
  private handingOver = false;

  constructor(clock: Clock, holdMs: number) {
    if (!(holdMs > 0)) throw new Error("the hold of urgent work must be positive");
    this.clock = clock;
    this.holdMs = holdMs;
  }

  /** Whether a routine pass may start now; when not, the subscribers are called once it may. */
  routineMayStart(): boolean {
    const now = this.clock.monotonic();
    if (now >= this.urgentUntil) return true;
    if (this.handingOver) return false;
    const fresh = [...this.routine.values()].filter((since) => now - since < this.holdMs);
    if (fresh.length === 0) return true;
    // The queues are woken when the hold ends or the running routine pass ages out, or earlier when it ends.
    this.held = true;
    this.wakeAt(Math.min(this.urgentUntil, Math.min(...fresh) + this.holdMs) - now);
    return false;
  }

  /** A pass ranked `rank` starts now; the function returned is called when it ends. */
  started(rank: Rank): () => void {
    const now = this.clock.monotonic();
    if (rank === "urgent") {
      this.urgentUntil = Math.max(this.urgentUntil, now + this.holdMs);
      return () => {};
    }
    const pass = Symbol();
    this.routine.set(pass, now);
    // While routine passes are held back, one that ends hands over to the next through a timer, not
    // at once (its own queue's next worker would start in the same turn of the event loop): the urgent
    // passes' replies get their turn in between.
    return () => {
      this.routine.delete(pass);
      if (!this.held) return;
      this.handingOver = true;
      this.wakeAt(0);
    };
  }

  /** `dispatch` is called whenever routine work held back may start; the function returned unsubscribes. */
  subscribe(dispatch: () => void): () => void {
    this.waiting.add(dispatch);
    return () => this.waiting.delete(dispatch);
  }

  private wakeAt(ms: number): void {
    const at = this.clock.monotonic() + Math.max(0, ms);
    if (this.timer && this.timer.at <= at) return;
    this.timer?.timer.cancel();
    this.timer = { at, timer: this.clock.setTimer(() => this.wake(), Math.max(0, ms)) };
  }

  private wake(): void {
    this.timer = undefined;
    this.held = false;
    this.handingOver = false;
    for (const dispatch of this.waiting) dispatch();
  }
}
