import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { build } from "../base/build.ts";
import { realClock, type Clock } from "../base/clock.ts";
import type { QueueObserver } from "./work-queue.ts";

// The metric names controller-runtime exposes, so that existing dashboards and alerts work.

const reconcileBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60];
const queueBuckets = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 100, 1000];

export type ReconcileResultLabel = "success" | "error" | "requeue" | "requeue_after";
export type WatchEvent = "add" | "update" | "delete" | "resync";
/** enqueued: it caused requests; ignored: it named none; filtered: an add or update a predicate dropped. */
export type WatchOutcome = "enqueued" | "ignored" | "filtered";

/** A request to an API server as the port observes it; `write` what it writes, undefined for a read. */
export interface ApiRequest {
  method: string;
  code: string;
  host: string;
  write: { resource: string; subresource: string; verb: string } | undefined;
}

export class Metrics {
  readonly registry = new Registry();
  readonly reconcileTotal = new Counter({
    name: "controller_runtime_reconcile_total",
    help: "Total number of reconciliations per controller",
    labelNames: ["controller", "result"],
    registers: [this.registry],
  });
  readonly reconcileErrors = this.counter(
    "controller_runtime_reconcile_errors_total",
    "Reconciliation errors",
  );
  readonly terminalErrors = this.counter(
    "controller_runtime_terminal_reconcile_errors_total",
    "Terminal reconciliation errors",
  );
  readonly reconcilePanics = this.counter(
    "controller_runtime_reconcile_panics_total",
    "Reconciliation panics",
  );
  readonly reconcileTime = new Histogram({
    name: "controller_runtime_reconcile_time_seconds",
    help: "Length of time per reconciliation per controller",
    labelNames: ["controller"],
    buckets: reconcileBuckets,
    registers: [this.registry],
  });
  readonly maxConcurrent = this.gauge(
    "controller_runtime_max_concurrent_reconciles",
    "Maximum number of workers",
  );
  readonly activeWorkers = this.gauge("controller_runtime_active_workers", "Number of workers in use");
  readonly leaderStatus = new Gauge({
    name: "leader_election_master_status",
    help: "1 while this process holds the named Lease, else 0",
    labelNames: ["name"],
    registers: [this.registry],
  });
  readonly restRequests = new Counter({
    name: "rest_client_requests_total",
    help: "HTTP requests to the Kubernetes API, by status code, method and host",
    labelNames: ["code", "method", "host"],
    registers: [this.registry],
  });
  readonly apiWrites = new Counter({
    name: "vhost_broker_api_writes_total",
    help: "Writes to the Kubernetes API (also in rest_client_requests_total), by resource, subresource and verb",
    labelNames: ["resource", "subresource", "verb"],
    registers: [this.registry],
  });
  readonly leaseRequests = new Counter({
    name: "vhost_broker_leader_election_requests_total",
    help: "The leader election's requests for its Lease (also in rest_client_requests_total), by status code and method",
    labelNames: ["code", "method"],
    registers: [this.registry],
  });
  private readonly watchEventsTotal = new Counter({
    name: "vhost_broker_watch_events_total",
    help: "Informer events handed to a controller's watch, by kind, event and what came of them",
    labelNames: ["controller", "kind", "event", "outcome"],
    registers: [this.registry],
  });
  private readonly queueDepth = this.queueGauge("workqueue_depth", "Current depth of the work queue");
  private readonly queueAdds = this.queueCounter("workqueue_adds_total", "Adds handled by the work queue");
  private readonly queueRetries = this.queueCounter(
    "workqueue_retries_total",
    "Retries handled by the work queue",
  );
  private readonly queueLatency = this.queueHistogram(
    "workqueue_queue_duration_seconds",
    "How long a key stays in the work queue before it is handed out",
  );
  private readonly workDuration = this.queueHistogram(
    "workqueue_work_duration_seconds",
    "How long processing a key takes",
  );
  private readonly inFlight = new Map<string, () => number[]>();

  /** `clock` must be the work queues' clock: the in-flight start times come from it. */
  constructor(options: { processMetrics?: boolean; clock?: Clock } = {}) {
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
    // As kube_state_metrics_build_info and the like: joined on, it labels any series with the build.
    new Gauge({
      name: "vhost_broker_build_info",
      help: "1, labelled with the version (package.json) and source revision of this build",
      labelNames: ["version", "revision"],
      registers: [this.registry],
    }).set({ version: build.version, revision: build.revision }, 1);
    const inFlight = this.inFlight;
    const clock = options.clock ?? realClock;
    const now = () => clock.monotonic();
    new Gauge({
      name: "workqueue_unfinished_work_seconds",
      help: "Seconds of work in progress not yet observed by work_duration",
      labelNames: ["name", "controller"],
      registers: [this.registry],
      collect() {
        for (const [name, starts] of inFlight) {
          const total = starts().reduce((sum, start) => sum + (now() - start) / 1000, 0);
          this.set({ name, controller: name }, total);
        }
      },
    });
    new Gauge({
      name: "workqueue_longest_running_processor_seconds",
      help: "Seconds the longest running processor has been running",
      labelNames: ["name", "controller"],
      registers: [this.registry],
      collect() {
        for (const [name, starts] of inFlight) {
          const oldest = Math.min(...starts(), now());
          this.set({ name, controller: name }, (now() - oldest) / 1000);
        }
      },
    });
  }

  /** Counts a request of a KubeRest: every one, its writes by what they write, the Lease's apart. */
  observeApiRequest(request: ApiRequest, leaderElection = false): void {
    const { method, code, host, write } = request;
    this.restRequests.inc({ method, code, host });
    if (write) this.apiWrites.inc({ ...write });
    if (leaderElection) this.leaseRequests.inc({ method, code });
  }

  /** The observer feeding the workqueue_* metrics of one controller's queue. */
  queueObserver(controller: string, inFlightSince: () => number[]): QueueObserver {
    const labels = { name: controller, controller };
    this.inFlight.set(controller, inFlightSince);
    this.queueDepth.set(labels, 0);
    this.queueAdds.inc(labels, 0);
    this.queueRetries.inc(labels, 0);
    return {
      add: () => this.queueAdds.inc(labels),
      depth: (depth) => this.queueDepth.set(labels, depth),
      queued: (seconds) => this.queueLatency.observe(labels, seconds),
      worked: (seconds) => this.workDuration.observe(labels, seconds),
      retry: () => this.queueRetries.inc(labels),
    };
  }

  /** Counts the events of one watch of a controller. */
  watchEvents(controller: string, kind: string): (event: WatchEvent, outcome: WatchOutcome) => void {
    return (event, outcome) => this.watchEventsTotal.inc({ controller, kind, event, outcome });
  }

  /** Makes every per-controller series visible at zero before the first reconcile. */
  registerController(controller: string, workers: number): void {
    this.maxConcurrent.set({ controller }, workers);
    this.activeWorkers.set({ controller }, 0);
    for (const result of ["success", "error", "requeue", "requeue_after"]) {
      this.reconcileTotal.inc({ controller, result }, 0);
    }
    this.reconcileErrors.inc({ controller }, 0);
    this.terminalErrors.inc({ controller }, 0);
    this.reconcilePanics.inc({ controller }, 0);
  }

  private counter(name: string, help: string) {
    return new Counter({ name, help, labelNames: ["controller"], registers: [this.registry] });
  }

  private gauge(name: string, help: string) {
    return new Gauge({ name, help, labelNames: ["controller"], registers: [this.registry] });
  }

  private queueGauge(name: string, help: string) {
    return new Gauge({ name, help, labelNames: ["name", "controller"], registers: [this.registry] });
  }

  private queueCounter(name: string, help: string) {
    return new Counter({ name, help, labelNames: ["name", "controller"], registers: [this.registry] });
  }

  private queueHistogram(name: string, help: string) {
    return new Histogram({
      name,
      help,
      labelNames: ["name", "controller"],
      buckets: queueBuckets,
      registers: [this.registry],
    });
  }
}
