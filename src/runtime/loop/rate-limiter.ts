import type { Clock } from "../base/clock.ts";

// client-go's default controller rate limiter: the larger of a per-key exponential backoff and a
// global token bucket, so that one failing key backs off alone while a storm of failures across
// many keys is still capped overall.

export interface RateLimiterOptions {
  baseDelayMs: number;
  maxDelayMs: number;
  /** Tokens per second of the global bucket. */
  qps: number;
  burst: number;
}

export const defaultRateLimiterOptions: RateLimiterOptions = {
  baseDelayMs: 5,
  maxDelayMs: 1_000_000,
  qps: 10,
  burst: 100,
};

export class RateLimiter {
  private readonly failures = new Map<string, number>();
  private tokens: number;
  private last: number;
  private readonly clock: Clock;
  private readonly options: RateLimiterOptions;

  constructor(clock: Clock, options: RateLimiterOptions = defaultRateLimiterOptions) {
    this.clock = clock;
    this.options = options;
    this.tokens = options.burst;
    this.last = clock.monotonic();
  }

  /** The delay before `key` may be retried; every call counts as one more failure. */
  when(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    const exponential = Math.min(this.options.baseDelayMs * 2 ** failures, this.options.maxDelayMs);
    return Math.max(exponential, this.reserveToken());
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  // Like golang.org/x/time/rate's Reserve: take a token now, possibly going into debt, and wait
  // until the debt is paid back.
  private reserveToken(): number {
    const now = this.clock.monotonic();
    const { qps, burst } = this.options;
    this.tokens = Math.min(burst, this.tokens + ((now - this.last) / 1000) * qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / qps) * 1000;
  }
}
