// Time as a dependency: the queue, backoff and leader election read it through this interface so
// that unit tests can drive time by hand.
export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch: the wall clock, for timestamps written out. It can step back. */
  now(): number;
  /**
   * Milliseconds on a monotonic clock of this process (arbitrary origin), for deadlines and expiry:
   * it never steps, whatever NTP or an operator does to the wall clock. Only differences mean anything.
   */
  monotonic(): number;
  /** Runs `fn` after `ms` of monotonic time (Node's timers are monotonic). */
  setTimer(fn: () => void, ms: number): Timer;
}

export const realClock: Clock = {
  now: () => Date.now(),
  // CLOCK_MONOTONIC on Linux: it goes on while the process is stopped (SIGSTOP), so a thawed process
  // sees how long it slept.
  monotonic: () => performance.now(),
  setTimer: longTimer,
};

/** Node's longest timer, about 24.8 days: setTimeout runs a longer delay after 1 ms instead. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * setTimeout for any delay: one longer than Node's longest timer is run in steps of at most that (a
 * requeue at a rotation 720h away, an orphan delay of 600h), as Go's timers would simply wait.
 */
export function longTimer(fn: () => void, ms: number): Timer {
  let handle: NodeJS.Timeout | undefined;
  const arm = (left: number) => {
    const step = Math.min(left, MAX_TIMER_MS);
    handle = setTimeout(() => (left > step ? arm(left - step) : fn()), step);
  };
  arm(Math.max(0, ms));
  return { cancel: () => clearTimeout(handle) };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
