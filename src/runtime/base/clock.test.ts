import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { longTimer, MAX_TIMER_MS, realClock } from "./clock.ts";

describe("realClock.setTimer", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("waits a delay past Node's longest timer in full, not 1 ms", () => {
    const fn = vi.fn();
    const hours = 720;
    realClock.setTimer(fn, hours * 3_600_000);
    vi.advanceTimersByTime(1_000);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(hours * 3_600_000 - 1_001);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it("runs a delay of exactly the longest timer, and a short one, once at its time", () => {
    const long = vi.fn();
    const short = vi.fn();
    realClock.setTimer(long, MAX_TIMER_MS);
    realClock.setTimer(short, 5);
    vi.advanceTimersByTime(5);
    expect(short).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(MAX_TIMER_MS - 6);
    expect(long).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(long).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(3 * MAX_TIMER_MS);
    expect(long).toHaveBeenCalledTimes(1);
  });

  it("cancels a long delay in any of its steps", () => {
    const fn = vi.fn();
    const timer = longTimer(fn, 3 * MAX_TIMER_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS + 10);
    timer.cancel();
    vi.advanceTimersByTime(3 * MAX_TIMER_MS);
    expect(fn).not.toHaveBeenCalled();
  });

  it("runs a negative delay at once", () => {
    const fn = vi.fn();
    longTimer(fn, -5);
    vi.advanceTimersByTime(0);
    expect(fn).toHaveBeenCalledTimes(1);
  });
});
