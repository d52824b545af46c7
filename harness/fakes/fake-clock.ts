import type { Clock, Timer } from "../../src/runtime/base/clock.ts";

/**
 * A clock for unit tests: time moves only when `advance` is called, firing due timers in order. The
 * wall clock (`now`) and the monotonic one move together, except that `stepWall` moves only the wall
 * clock, as NTP or an operator stepping the system time would; timers follow the monotonic clock.
 */
export class FakeClock implements Clock {
  /** Monotonic time: what `advance` moves and timers are due on. */
  private current: number;
  /** The wall clock minus the monotonic one. */
  private wallOffset: number;
  private timers: { at: number; seq: number; fn: () => void; cancelled: boolean }[] = [];
  private seq = 0;

  constructor(start = 1_700_000_000_000) {
    // A different origin from the wall clock, so that a mix-up of the two shows in a test, and a
    // fraction, as performance.now() has (AbortSignal.timeout and friends refuse one).
    this.current = 5_000_000.25;
    this.wallOffset = start - this.current;
  }

  now(): number {
    return this.current + this.wallOffset;
  }

  monotonic(): number {
    return this.current;
  }

  setTimer(fn: () => void, ms: number): Timer {
    const entry = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(entry);
    return { cancel: () => void (entry.cancelled = true) };
  }

  /** Moves time forward by `ms`, running every timer that falls due on the way. */
  advance(ms: number): void {
    const end = this.current + ms;
    for (;;) {
      const due = this.timers
        .filter((t) => !t.cancelled && t.at <= end)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      due.cancelled = true;
      this.current = Math.max(this.current, due.at);
      due.fn();
    }
    this.current = end;
    this.timers = this.timers.filter((t) => !t.cancelled);
  }

  /** Steps the wall clock by `ms` (negative: back) without any time passing; no timer fires. */
  stepWall(ms: number): void {
    this.wallOffset += ms;
  }

  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
