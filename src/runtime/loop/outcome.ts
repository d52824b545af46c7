import type { Logger } from "pino";
import { TransientError, classifyError, findError, isPanic } from "../base/errors.ts";
import { FencedWriteError } from "../base/write-fence.ts";
import type { Metrics, ReconcileResultLabel } from "./metrics.ts";
import type { WorkQueue } from "./work-queue.ts";

// What follows a pass of a key, by its outcome (docs/runtime.md, Error classes): a success forgets the
// key's backoff and schedules the pass it asked for or its drift re-check; a failure is retried as the
// class of its error says.

export interface OutcomeOptions {
  controller: string;
  metrics: Metrics;
  transientRequeueMs: number;
  /** Backstop retry after a terminal error; 0 or absent = none (the object's next change retries it). */
  terminalRetryMs?: number | undefined;
  /** The window of the random wait before a key's drift re-check; absent = none. */
  drift?: { minMs: number; maxMs: number } | undefined;
  /** Whether the object of a key still exists (in the caches); a gone one gets no drift re-check. */
  exists?: ((key: string) => boolean) | undefined;
}

export class Outcomes {
  private readonly queue: WorkQueue;
  private readonly options: OutcomeOptions;

  constructor(queue: WorkQueue, options: OutcomeOptions) {
    this.queue = queue;
    this.options = options;
  }

  /** After a pass that returned: the pass it asked for, or the drift re-check, whichever comes first. */
  succeeded(key: string, log: Logger, result: { requeueAfterMs?: number | undefined }): void {
    this.queue.forget(key);
    const asked =
      result.requeueAfterMs !== undefined && result.requeueAfterMs > 0 ? result.requeueAfterMs : 0;
    const gone = this.options.exists && !this.options.exists(key);
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

  /** After a pass that threw while the controller runs: a retry as the error's class says. */
  failed(key: string, log: Logger, error: unknown): void {
    const { controller: name, metrics } = this.options;
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
        log.error(
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
    this.options.metrics.reconcileTotal.inc({ controller: this.options.controller, result });
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
