import type { Clock, Timer } from "../../src/runtime/clock.ts";

/** A clock for unit tests: time moves only when `advance` is called, firing due timers in order. */
export class FakeClock implements Clock {
  private current: number;
  private timers: { at: number; seq: number; fn: () => void; cancelled: boolean }[] = [];
  private seq = 0;

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  now(): number {
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

  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
