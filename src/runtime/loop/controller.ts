import type { Logger } from "pino";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Clock } from "../base/clock.ts";
import { ReconcileTimeoutError, TransientError, classifyError, findError, isPanic } from "../base/errors.ts";
import { slowLanes, type SlowLane } from "./lanes.ts";
import { FencedWriteError } from "../base/write-fence.ts";
import { reconcileLogger } from "../base/logging.ts";
import type { Metrics, ReconcileResultLabel } from "./metrics.ts";
import { RateLimiter } from "./rate-limiter.ts";
import type { Timer } from "../base/clock.ts";
import { WorkQueue } from "./work-queue.ts";

// A lane can be slow with thousands of requests behind it (a restart among 30,000 objects of one busy
// broker): an Event for each flooded the API server until the leader lost its Lease. The first requests
// of a backlog say why they wait; the rest wait as they do.
const TOLD_PER_BACKLOG = 20;
// A hung endpoint's lane empties and fills again at each round of retries (its passes fail at their
// deadline and wait out their retry): it is forgotten, and its requests told again, only once it has been
// idle this long.
const FORGET_IDLE_LANE_MS = 5 * 60_000;

// The reconcile loop: N workers take keys from one queue and call the reconciler; its outcome
// decides what happens next (see errors.ts). No outcome, including a thrown non-error, stops a worker.

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
  private readonly stopping = new AbortController();
  private workers: Promise<void>[] = [];
  /** The requests told why they wait, per lane, and when the lane last had requests waiting or running. */
  private readonly told = new Map<string, { keys: Set<string>; busyAt: number }>();
  private laneCheck: Timer | undefined;

  constructor(options: ControllerOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 1)
      throw new Error("workers must be at least 1");
    this.options = options;
    this.name = options.name;
    const observer = options.metrics.queueObserver(options.name, () => this.queue.inFlightSince());
    const lanes = options.lanes;
    this.queue = new WorkQueue(
      options.clock,
      new RateLimiter(options.clock),
      observer,
      lanes && { of: (key) => lanes.of(requestOf(key)), budget: lanes.budget },
    );
    options.metrics.registerController(options.name, options.workers);
  }

  enqueue(request: Request): void {
    this.queue.add(requestKey(request));
  }

  enqueueAfter(request: Request, delayMs: number): void {
    this.queue.addAfter(requestKey(request), delayMs);
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

  private scheduleLaneCheck(): void {
    const lanes = this.options.lanes;
    if (!lanes || this.queue.isShuttingDown()) return;
    this.laneCheck = this.options.clock.setTimer(
      () => {
        this.checkLanes(lanes);
        this.scheduleLaneCheck();
      },
      Math.max(1, lanes.slowAfterMs / 2),
    );
  }

  /**
   * Tells the requests waiting in a slow lane why, once while the lane stays busy: a hung endpoint's
   * lane is slow again at each round of passes that wait out their deadline, and a request that waits
   * through several rounds is told once. A lane idle for FORGET_IDLE_LANE_MS forgets. Only the first
   * TOLD_PER_BACKLOG waiting requests are told (the log line gives the whole backlog).
   */
  private checkLanes(lanes: LaneSettings): void {
    const states = this.queue.laneStates();
    const now = this.options.clock.monotonic();
    const slow = slowLanes(states, now, lanes.slowAfterMs);
    for (const { lane } of states) {
      const told = this.told.get(lane);
      if (told) told.busyAt = now;
    }
    for (const [lane, told] of this.told)
      if (now - told.busyAt >= FORGET_IDLE_LANE_MS) this.told.delete(lane);
    for (const spell of slow) {
      let told = this.told.get(spell.lane)?.keys;
      if (!told) {
        told = new Set();
        this.told.set(spell.lane, { keys: told, busyAt: now });
        this.options.log.warn(
          { controller: this.name, lane: spell.lane, running: spell.running, waiting: spell.waiting.length },
          "a lane is slow: its endpoint has held a pass for longer than expected; requests of other lanes go on",
        );
      }
      for (const key of spell.waiting) {
        if (told.size >= TOLD_PER_BACKLOG) break;
        if (told.has(key)) continue;
        told.add(key);
        lanes.slow(requestOf(key), spell);
      }
    }
  }

  private async work(): Promise<void> {
    for (;;) {
      const next = await this.queue.get();
      if (next.shutdown) return;
      const { settled } = await this.process(next.key);
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
  private async process(key: string): Promise<{ settled: Promise<void> }> {
    const { name, metrics, clock } = this.options;
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
    const running = Promise.resolve().then(() => this.options.reconcile(request, { log, signal }));
    let finished = false;
    const settled = running.then(
      () => void (finished = true),
      () => void (finished = true),
    );
    try {
      const result = await Promise.race([running, deadline]);
      this.succeeded(key, log, result ?? {});
    } catch (error) {
      this.failed(key, log, error);
      if (!finished) return { settled: this.released(settled, log) };
    } finally {
      (timer as { cancel(): void } | undefined)?.cancel();
      this.stopping.signal.removeEventListener("abort", onStop);
      metrics.activeWorkers.dec({ controller: name });
      metrics.reconcileTime.observe({ controller: name }, (clock.monotonic() - started) / 1000);
    }
    return { settled: this.stopping.signal.aborted ? Promise.resolve() : settled };
  }

  private succeeded(key: string, log: Logger, result: Result): void {
    this.queue.forget(key);
    const asked =
      result.requeueAfterMs !== undefined && result.requeueAfterMs > 0 ? result.requeueAfterMs : 0;
    const gone = this.options.exists && !this.options.exists(requestOf(key));
    const drift = gone ? 0 : this.driftDelay();
    const delay = asked > 0 && drift > 0 ? Math.min(asked, drift) : asked || drift;
    if (delay > 0) this.queue.addAfter(key, delay);
    if (asked > 0) {
      this.count("requeue_after");
      log.debug({ requeueAfterMs: asked, nextPassInMs: delay }, "reconciled; requeue scheduled");
    } else {
      this.count("success");
      log.debug(delay > 0 ? { nextPassInMs: delay } : {}, "reconciled");
    }
  }

  private driftDelay(): number {
    const drift = this.options.drift;
    if (!drift || drift.maxMs <= 0) return 0;
    return Math.round(drift.minMs + Math.random() * (drift.maxMs - drift.minMs));
  }

  private failed(key: string, log: Logger, error: unknown): void {
    const { name, metrics } = this.options;
    if (this.stopping.signal.aborted) return log.info("reconcile abandoned: the controller stopped");
    // The fence logged the refusal once and the process is stepping down: no retry, no error line.
    if (findError(error, FencedWriteError)) return log.debug("reconcile ended: a write was fenced");
    if (isPanic(error)) metrics.reconcilePanics.inc({ controller: name });
    switch (classifyError(error)) {
      case "terminal": {
        // The next change of the object enqueues it again; the backstop retries it in case the fix
        // was somewhere no watch sees. Counted as controller-runtime does: an error, and a terminal one.
        const backstop = this.options.terminalRetryMs ?? 0;
        this.queue.forget(key);
        if (backstop > 0) this.queue.addAfter(key, backstop);
        metrics.terminalErrors.inc({ controller: name });
        metrics.reconcileErrors.inc({ controller: name });
        this.count("error");
        log.info(
          { err: error, ...(backstop > 0 ? { retryInMs: backstop } : {}) },
          "reconcile failed terminally; waiting for a change",
        );
        return;
      }
      case "transient": {
        // A backend down or a timeout: an error for the alerts, retried at a fixed interval rather
        // than with a growing backoff, and a warning rather than an error line.
        const delay = findError(error, TransientError)?.retryAfterMs ?? this.options.transientRequeueMs;
        this.queue.forget(key);
        this.queue.addAfter(key, delay);
        metrics.reconcileErrors.inc({ controller: name });
        this.count("error");
        log.warn({ reason: errorMessage(error), retryInMs: delay }, "transient failure; retry scheduled");
        return;
      }
      case "notFound":
        this.queue.addRateLimited(key);
        this.count("requeue");
        log.info({ reason: errorMessage(error) }, "not found; retry with backoff");
        return;
      case "unclassified":
        this.queue.addRateLimited(key);
        this.count("error");
        metrics.reconcileErrors.inc({ controller: name });
        log.error({ err: error }, "Reconciler error");
    }
  }

  private count(result: ReconcileResultLabel): void {
    this.options.metrics.reconcileTotal.inc({ controller: this.options.name, result });
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
