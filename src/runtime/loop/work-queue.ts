import type { Clock, Timer } from "../base/clock.ts";
import { Lanes, type LaneState, type Rank } from "./lanes.ts";
import type { Precedence } from "./precedence.ts";
import { RateLimiter } from "./rate-limiter.ts";

// A keyed work queue with client-go's guarantees: a key waits in the queue at most once, no two
// workers hold the same key, a key added while it is being processed is handed out again after
// `done`, failures back off per key, and delayed adds keep the earliest deadline. With lanes, the
// waiting keys are handed out by lane in turn, each lane within its budget (lanes.ts). Deadlines and
// durations are read on the monotonic clock, as the timers run: compared on a wall clock stepped back,
// a deadline kept as "earlier" would fire as late as its timer, minutes after a later add's.

export interface QueueObserver {
  add(): void;
  depth(depth: number): void;
  /** Seconds a key waited between being queued and being handed to a worker. */
  queued(seconds: number): void;
  /** Seconds a worker held a key. */
  worked(seconds: number): void;
  retry(): void;
}

/** A key handed out, with the monotonic time it was queued (its earliest add since it was last handed out). */
export type Next = { key: string; queuedAt: number; shutdown: false } | { key: undefined; shutdown: true };

/** Keys filed by the endpoint their passes talk to (lanes.ts); `of` is read when a key is queued. */
export interface LaneOptions {
  of(key: string): string;
  /** Passes of one lane at once. */
  budget: number;
}

/** A lane as the queue sees it now; `runningSince` is the monotonic start of its oldest pass. */
export interface LaneView extends LaneState {
  runningSince: number | undefined;
}

/**
 * How soon each key's pass is needed (lanes.ts), read when it is queued; the age floor bounds a routine
 * wait. The queues of one process share a `precedence` (precedence.ts): urgent work in one holds back
 * the routine work of all.
 */
export interface RankOptions {
  of(key: string): Rank;
  ageFloorMs: number;
  precedence?: Precedence | undefined;
}

export class WorkQueue {
  private readonly queue: Lanes;
  /** The lane of each key a worker holds. */
  private readonly laneOfRunning = new Map<string, string>();
  private readonly dirty = new Set<string>();
  private readonly processing = new Map<string, number>();
  /** What to tell the precedence when each key a worker holds is done. */
  private readonly ending = new Map<string, () => void>();
  private readonly unsubscribe: (() => void) | undefined;
  private readonly addedAt = new Map<string, number>();
  private readonly delayed = new Map<string, { at: number; timer: Timer }>();
  private readonly getters: ((next: Next) => void)[] = [];
  private drained: (() => void)[] = [];
  private shuttingDown = false;
  private readonly clock: Clock;
  private readonly limiter: RateLimiter;
  private readonly observer: QueueObserver | undefined;
  private readonly lanes: LaneOptions | undefined;
  private readonly rank: RankOptions | undefined;

  constructor(
    clock: Clock,
    limiter: RateLimiter,
    observer?: QueueObserver,
    lanes?: LaneOptions,
    rank?: RankOptions,
  ) {
    this.clock = clock;
    this.limiter = limiter;
    this.observer = observer;
    this.lanes = lanes;
    this.rank = rank;
    this.queue = new Lanes(lanes?.budget, rank?.ageFloorMs);
    this.unsubscribe = rank?.precedence?.subscribe(() => this.dispatch());
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.observer?.add();
    this.dirty.add(key);
    this.addedAt.set(key, this.clock.monotonic());
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Adds `key` after `delayMs`; an earlier pending deadline for the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const at = this.clock.monotonic() + delayMs;
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
    const next = this.take();
    if (next !== undefined) return Promise.resolve(this.handOut(next.key, next.lane, next.rank));
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(key: string): void {
    const started = this.processing.get(key);
    if (started === undefined) return;
    this.processing.delete(key);
    this.queue.release(this.laneOfRunning.get(key) ?? "");
    this.laneOfRunning.delete(key);
    // A routine pass's end may let the routine keys other queues hold back start (precedence.ts).
    const end = this.ending.get(key);
    this.ending.delete(key);
    end?.();
    this.observer?.worked((this.clock.monotonic() - started) / 1000);
    if (this.dirty.has(key) && !this.shuttingDown) this.push(key);
    // The lane's freed place may let a waiting worker take a key of it.
    else this.dispatch();
    if (this.processing.size === 0) {
      for (const resolve of this.drained) resolve();
      this.drained = [];
    }
  }

  len(): number {
    return this.queue.len();
  }

  /** The lanes with keys waiting or passes running. */
  laneStates(): LaneView[] {
    return this.queue.states().map((state) => {
      let runningSince: number | undefined;
      for (const [key, lane] of this.laneOfRunning) {
        const since = this.processing.get(key);
        if (lane === state.lane && since !== undefined) runningSince = Math.min(runningSince ?? since, since);
      }
      return { ...state, runningSince };
    });
  }

  /** Start times (monotonic ms) of the keys workers hold now. */
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
      this.unsubscribe?.();
      for (const { timer } of this.delayed.values()) timer.cancel();
      this.delayed.clear();
      this.queue.clear();
      this.observer?.depth(0);
      for (const resolve of this.getters.splice(0)) resolve({ key: undefined, shutdown: true });
    }
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  private push(key: string): void {
    const rank = this.rank?.of(key) ?? "urgent";
    this.queue.push(this.lanes?.of(key) ?? "", key, rank, this.addedAt.get(key) ?? this.clock.monotonic());
    this.observer?.depth(this.queue.len());
    this.dispatch();
  }

  /** Hands waiting keys to waiting workers while a lane under its budget has one. */
  private dispatch(): void {
    while (this.getters.length > 0) {
      const next = this.take();
      if (next === undefined) return;
      this.getters.shift()?.(this.handOut(next.key, next.lane, next.rank));
    }
  }

  /** The next key the lanes hand out, routine ones only while the precedence lets them start. */
  private take(): { key: string; lane: string; rank: Rank } | undefined {
    const precedence = this.rank?.precedence;
    return this.queue.take(this.clock.monotonic(), precedence && (() => precedence.routineMayStart()));
  }

  private handOut(key: string, lane: string, rank: Rank): Next {
    const now = this.clock.monotonic();
    const end = this.rank?.precedence?.started(rank);
    if (end) this.ending.set(key, end);
    const queuedAt = this.addedAt.get(key) ?? now;
    this.dirty.delete(key);
    this.processing.set(key, now);
    this.laneOfRunning.set(key, lane);
    this.observer?.queued((now - queuedAt) / 1000);
    this.addedAt.delete(key);
    this.observer?.depth(this.queue.len());
    return { key, queuedAt, shutdown: false };
  }
}
