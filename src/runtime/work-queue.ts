import type { Clock, Timer } from "./clock.ts";
import { RateLimiter } from "./rate-limiter.ts";

// A keyed work queue with client-go's guarantees: a key waits in the queue at most once, no two
// workers hold the same key, a key added while it is being processed is handed out again after
// `done`, failures back off per key, and delayed adds keep the earliest deadline.

export interface QueueObserver {
  add(): void;
  depth(depth: number): void;
  /** Seconds a key waited between being queued and being handed to a worker. */
  queued(seconds: number): void;
  /** Seconds a worker held a key. */
  worked(seconds: number): void;
  retry(): void;
}

export type Next = { key: string; shutdown: false } | { key: undefined; shutdown: true };

export class WorkQueue {
  private queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Map<string, number>();
  private readonly addedAt = new Map<string, number>();
  private readonly delayed = new Map<string, { at: number; timer: Timer }>();
  private readonly getters: ((next: Next) => void)[] = [];
  private drained: (() => void)[] = [];
  private shuttingDown = false;
  private readonly clock: Clock;
  private readonly limiter: RateLimiter;
  private readonly observer: QueueObserver | undefined;

  constructor(clock: Clock, limiter: RateLimiter, observer?: QueueObserver) {
    this.clock = clock;
    this.limiter = limiter;
    this.observer = observer;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.observer?.add();
    this.dirty.add(key);
    this.addedAt.set(key, this.clock.now());
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Adds `key` after `delayMs`; an earlier pending deadline for the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const at = this.clock.now() + delayMs;
    const pending = this.delayed.get(key);
    if (pending && pending.at <= at) return;
    pending?.timer.cancel();
    const timer = this.clock.setTimer(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.delayed.set(key, { at, timer });
  }

  addRateLimited(key: string): void {
    this.observer?.retry();
    this.addAfter(key, this.limiter.when(key));
  }

  /** Clears the failure history of `key`, so its next failure starts at the base delay. */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.limiter.numRequeues(key);
  }

  /** Waits for the next key; resolves with `shutdown: true` once the queue shuts down. */
  get(): Promise<Next> {
    if (this.shuttingDown) return Promise.resolve({ key: undefined, shutdown: true });
    const key = this.queue.shift();
    if (key !== undefined) return Promise.resolve(this.handOut(key));
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(key: string): void {
    const started = this.processing.get(key);
    if (started === undefined) return;
    this.processing.delete(key);
    this.observer?.worked((this.clock.now() - started) / 1000);
    if (this.dirty.has(key) && !this.shuttingDown) this.push(key);
    if (this.processing.size === 0) {
      for (const resolve of this.drained) resolve();
      this.drained = [];
    }
  }

  len(): number {
    return this.queue.length;
  }

  /** Start times (ms) of the keys workers hold now. */
  inFlightSince(): number[] {
    return [...this.processing.values()];
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /**
   * Stops handing out keys and drops what waits (the next leader lists everything again), then
   * resolves once every key a worker holds is done.
   */
  shutDownWithDrain(): Promise<void> {
    if (!this.shuttingDown) {
      this.shuttingDown = true;
      for (const { timer } of this.delayed.values()) timer.cancel();
      this.delayed.clear();
      this.queue = [];
      this.observer?.depth(0);
      for (const resolve of this.getters.splice(0)) resolve({ key: undefined, shutdown: true });
    }
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  private push(key: string): void {
    const getter = this.getters.shift();
    if (getter) return getter(this.handOut(key));
    this.queue.push(key);
    this.observer?.depth(this.queue.length);
  }

  private handOut(key: string): Next {
    const now = this.clock.now();
    this.dirty.delete(key);
    this.processing.set(key, now);
    this.observer?.queued((now - (this.addedAt.get(key) ?? now)) / 1000);
    this.addedAt.delete(key);
    this.observer?.depth(this.queue.length);
    return { key, shutdown: false };
  }
}
