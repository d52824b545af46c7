import type { Logger } from "pino";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Clock } from "../base/clock.ts";
import { ReconcileTimeoutError } from "../base/errors.ts";
import { SlowLaneNotices, type SlowLane } from "./slow-lanes.ts";
import { reconcileLogger } from "../base/logging.ts";
import type { Metrics } from "./metrics.ts";
import { Outcomes } from "./outcome.ts";
import { RateLimiter } from "./rate-limiter.ts";
import type { Timer } from "../base/clock.ts";
import type { Rank } from "./lanes.ts";
import type { Precedence } from "./precedence.ts";
import { WorkQueue } from "./work-queue.ts";

// The reconcile loop: N workers take keys from one queue and call the reconciler; its outcome
// decides what happens next (see ../base/errors.ts). No outcome, including a thrown non-error, stops a worker.

/** What a reconcile is about; `cluster` is "" for the management cluster. */
export interface Request {
  cluster: string;
  namespace: string;
  name: string;
}

export interface ReconcileContext {
  log: Logger;
  /** Aborted when the reconcile times out or the controller stops: stop and return. */
  signal: AbortSignal;
  /**
   * When the request was queued (wall clock, ms): the pass was owed from then. A deadline that closes
   * (a rotation window) is judged at this time, not at the end of the request's wait in a busy queue.
   */
  queuedAt: number;
}

/** What a reconcile asks of the work queue: look again after a delay, or wait for the next event. */
export interface Result {
  requeueAfterMs?: number | undefined;
}
export type ReconcileResult = Result | void;
export type Reconciler = (request: Request, context: ReconcileContext) => Promise<ReconcileResult>;

/**
 * A lane per endpoint (lanes.ts): the passes of one broker or database server take at most `budget`
 * of the workers, so a hung endpoint holds only its own lane; the workers go to the lanes in turn.
 */
export interface LaneSettings {
  /** The endpoint of a request's object, from the caches; "" when it has none (yet). */
  of: (request: Request) => string;
  budget: number;
  /** A lane whose oldest pass has run this long while requests wait behind it is slow. */
  slowAfterMs: number;
  /** Told about each request waiting in a slow lane, once while the lane stays busy: why it waits. */
  slow: (request: Request, lane: SlowLane) => void;
}

export interface ControllerOptions {
  name: string;
  reconcile: Reconciler;
  /** Passes at once, across the lanes when there are lanes. */
  workers: number;
  lanes?: LaneSettings;
  timeoutMs: number;
  transientRequeueMs: number;
  /** Backstop retry after a terminal error; 0 or absent = none (the object's next change retries it). */
  terminalRetryMs?: number;
  /**
   * After a pass that asks for no requeue (or a later one), the key is checked again after a random
   * wait in this window, so that drift is found and the re-checks of many objects spread out.
   */
  drift?: { minMs: number; maxMs: number };
  /** Whether the object of a request still exists (in the caches); a gone one gets no drift re-check. */
  exists?: (request: Request) => boolean;
  /**
   * How soon a request's pass is needed, from the caches (lanes.ts); absent: all are urgent. The
   * controllers of a process share one `precedence` (precedence.ts).
   */
  rank?: { of: (request: Request) => Rank; ageFloorMs: number; precedence?: Precedence };
  clock: Clock;
  log: Logger;
  metrics: Metrics;
}

export function requestKey(r: Request): string {
  return JSON.stringify([r.cluster, r.namespace, r.name]);
}

function requestOf(key: string): Request {
  const [cluster, namespace, name] = JSON.parse(key) as [string, string, string];
  return { cluster, namespace, name };
}

export class Controller {
  readonly name: string;
  private readonly options: ControllerOptions;
  private readonly queue: WorkQueue;
  private readonly outcomes: Outcomes;
  private readonly stopping = new AbortController();
  private workers: Promise<void>[] = [];
  /** What the requests waiting in slow lanes were told; undefined without lanes. */
  private readonly notices: SlowLaneNotices | undefined;
  private laneCheck: Timer | undefined;

  constructor(options: ControllerOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 1)
      throw new Error("workers must be at least 1");
    this.options = options;
    this.name = options.name;
    const observer = options.metrics.queueObserver(options.name, () => this.queue.inFlightSince());
    const lanes = options.lanes;
    const rank = options.rank;
    this.queue = new WorkQueue(
      options.clock,
      new RateLimiter(options.clock),
      observer,
      lanes && { of: (key) => lanes.of(requestOf(key)), budget: lanes.budget },
      rank && {
        of: (key) => rank.of(requestOf(key)),
        ageFloorMs: rank.ageFloorMs,
        precedence: rank.precedence,
      },
    );
    const exists = options.exists;
    this.outcomes = new Outcomes(this.queue, {
      controller: options.name,
      metrics: options.metrics,
      transientRequeueMs: options.transientRequeueMs,
      terminalRetryMs: options.terminalRetryMs,
      drift: options.drift,
      exists: exists && ((key) => exists(requestOf(key))),
    });
    options.metrics.registerController(options.name, options.workers);
    this.notices =
      lanes &&
      new SlowLaneNotices({
        controller: options.name,
        slowAfterMs: lanes.slowAfterMs,
        tell: (key, lane) => lanes.slow(requestOf(key), lane),
        log: options.log,
      });
  }

  enqueue(request: Request): void {
    this.queue.add(requestKey(request));
  }

  start(): void {
    if (this.workers.length > 0) return;
    for (let i = 0; i < this.options.workers; i++) this.workers.push(this.work());
    this.scheduleLaneCheck();
  }

  /** Stops taking keys and waits for the reconciles in flight (or aborts them when `abort`). */
  async stop(abort = false): Promise<void> {
    if (abort) this.stopping.abort();
    this.laneCheck?.cancel();
    const drained = this.queue.shutDownWithDrain();
    await Promise.all(this.workers);
    if (!abort) await drained;
  }

  /** Every half of `slowAfterMs`, the waiting requests of slow lanes are told why (slow-lanes.ts). */
  private scheduleLaneCheck(): void {
    const { lanes, clock } = this.options;
    const notices = this.notices;
    if (!lanes || !notices || this.queue.isShuttingDown()) return;
    this.laneCheck = clock.setTimer(
      () => {
        notices.check(this.queue.laneStates(), clock.monotonic());
        this.scheduleLaneCheck();
      },
      Math.max(1, lanes.slowAfterMs / 2),
    );
  }

  private async work(): Promise<void> {
    for (;;) {
      const next = await this.queue.get();
      if (next.shutdown) return;
      const { settled } = await this.process(next.key, next.queuedAt);
      // A reconcile abandoned at its deadline keeps its key until it really ends, so that the
      // same key never runs twice at once, but for one more deadline at most: a call that ignores its
      // signal must not keep the object from ever being reconciled again, nor a shutdown from
      // finishing. The worker itself moves on.
      void settled.then(() => this.queue.done(next.key));
      // A pass answered from memory (the cache, a listing) awaits no I/O: without a turn of the event
      // loop between passes, a backlog of them starves the Lease's renewals, the probes and the metrics.
      await yieldToEventLoop();
    }
  }

  /**
   * When the key of a reconcile abandoned at its deadline is free again: when it ends, or one more
   * deadline later, whichever comes first. What it does after that is its own: its result is discarded.
   */
  private released(settled: Promise<void>, log: Logger): Promise<void> {
    if (this.stopping.signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = this.options.clock.setTimer(() => {
        log.warn(
          { abandonedForMs: this.options.timeoutMs },
          "a reconcile abandoned at its deadline still runs; its key is free again, its result will be discarded",
        );
        resolve();
      }, this.options.timeoutMs);
      void settled.then(() => {
        timer.cancel();
        resolve();
      });
    });
  }

  /** Runs one reconcile; resolves (with when its key is free again) at the latest at its deadline. */
  private async process(key: string, queuedAtMonotonic: number): Promise<{ settled: Promise<void> }> {
    const { name, metrics, clock } = this.options;
    const queuedAt = clock.now() - (clock.monotonic() - queuedAtMonotonic);
    const request = requestOf(key);
    const log = reconcileLogger(this.options.log, { controller: name, ...request });
    const timeout = new AbortController();
    const signal = AbortSignal.any([timeout.signal, this.stopping.signal]);
    const started = clock.monotonic();
    metrics.activeWorkers.inc({ controller: name });
    let timer;
    let onStop = () => {};
    const deadline = new Promise<never>((_, reject) => {
      timer = clock.setTimer(() => {
        timeout.abort();
        reject(new ReconcileTimeoutError(`reconcile did not finish within ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
      // Stopping with abort does not wait for a reconcile that ignores its signal.
      onStop = () => reject(new Error("controller stopped"));
      this.stopping.signal.addEventListener("abort", onStop, { once: true });
    });
    deadline.catch(() => undefined);
    const running = Promise.resolve().then(() => this.options.reconcile(request, { log, signal, queuedAt }));
    let finished = false;
    const settled = running.then(
      () => void (finished = true),
      () => void (finished = true),
    );
    try {
      const result = await Promise.race([running, deadline]);
      this.outcomes.succeeded(key, log, result ?? {});
    } catch (error) {
      if (this.stopping.signal.aborted) log.info("reconcile abandoned: the controller stopped");
      else this.outcomes.failed(key, log, error);
      if (!finished) return { settled: this.released(settled, log) };
    } finally {
      (timer as { cancel(): void } | undefined)?.cancel();
      this.stopping.signal.removeEventListener("abort", onStop);
      metrics.activeWorkers.dec({ controller: name });
      metrics.reconcileTime.observe({ controller: name }, (clock.monotonic() - started) / 1000);
    }
    return { settled: this.stopping.signal.aborted ? Promise.resolve() : settled };
  }
}
