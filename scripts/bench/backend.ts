// What serves the orders' topology objects during a run. The built-in backend is one operator process
// (e2e/support/operator-process.ts) with the built-in topology controller; a backend that runs another
// topology operator beside the order controller (issue 16's upstream peer) implements the same
// interface, adding its process's figures to the counters.
import { builtMain, launchNode, OperatorProcess } from "../../e2e/support/operator-process.ts";
import { parseMetrics, sum, type Sample } from "./prometheus.ts";

/** Cumulative figures of the operator process(es) since their start. */
export interface Counters {
  apiReads: number;
  apiWrites: number;
  brokerReads: number;
  brokerWrites: number;
  openBaoRequests: number;
  openBaoWrites: number;
  rssBytes: number;
  heapUsedBytes: number;
  cpuSeconds: number;
  /** Reconciles by controller name. */
  reconciles: Record<string, number>;
  /** Keys waiting plus keys being worked on, over all controllers. */
  pending: number;
  /** Seconds keys waited in each controller's queue, and seconds its workers spent on them. */
  queueWaitSeconds: Record<string, number>;
  workSeconds: Record<string, number>;
}

export interface RunningBackend {
  counters(): Promise<Counters>;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** --max-concurrent-reconciles of every controller. */
  workers: number;
  /** Working directory and log file of the process(es). */
  cwd: string;
  logFile: string;
}

export type TopologyKindName = "vhosts" | "users" | "permissions" | "queues" | "exchanges" | "bindings";

export interface Backend {
  name: string;
  /** The order controller's name in controller_runtime_reconcile_total. */
  orderController: string;
  /** The controller serving each topology kind, by its plural. */
  topologyController(kind: TopologyKindName): string;
  start(options: StartOptions): Promise<RunningBackend>;
}

const writes = ["POST", "PUT", "PATCH", "DELETE"];

/** The counters one vhost-broker process exports (docs/metrics.md). */
export function countersOf(samples: Sample[]): Counters {
  const byController = (name: string) => {
    const out: Record<string, number> = {};
    for (const s of samples) {
      if (s.name !== name) continue;
      const c = s.labels["controller"] ?? "";
      out[c] = (out[c] ?? 0) + s.value;
    }
    return out;
  };
  const backend = "vhost_broker_backend_request_duration_seconds_count";
  return {
    apiReads: sum(samples, "rest_client_requests_total", { method: "GET" }),
    apiWrites: sum(samples, "rest_client_requests_total", { method: writes }),
    brokerReads: sum(samples, backend, { backend: "rabbitmq", operation: "GET" }),
    brokerWrites: sum(samples, backend, { backend: "rabbitmq", operation: writes }),
    openBaoRequests: sum(samples, backend, { backend: "openbao" }),
    openBaoWrites: sum(samples, backend, { backend: "openbao", operation: ["write", "purge"] }),
    rssBytes: sum(samples, "process_resident_memory_bytes"),
    heapUsedBytes: sum(samples, "nodejs_heap_size_used_bytes"),
    cpuSeconds: sum(samples, "process_cpu_seconds_total"),
    reconciles: byController("controller_runtime_reconcile_total"),
    pending: sum(samples, "workqueue_depth") + sum(samples, "controller_runtime_active_workers"),
    queueWaitSeconds: byController("workqueue_queue_duration_seconds_sum"),
    workSeconds: byController("workqueue_work_duration_seconds_sum"),
  };
}

/** The counters that grew from `before` to `after` (gauges: the value of `after`). */
export function delta(before: Counters, after: Counters): Counters {
  const minus = (a: Record<string, number>, b: Record<string, number>) =>
    Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]));
  return {
    apiReads: after.apiReads - before.apiReads,
    apiWrites: after.apiWrites - before.apiWrites,
    brokerReads: after.brokerReads - before.brokerReads,
    brokerWrites: after.brokerWrites - before.brokerWrites,
    openBaoRequests: after.openBaoRequests - before.openBaoRequests,
    openBaoWrites: after.openBaoWrites - before.openBaoWrites,
    rssBytes: after.rssBytes,
    heapUsedBytes: after.heapUsedBytes,
    cpuSeconds: after.cpuSeconds - before.cpuSeconds,
    reconciles: minus(after.reconciles, before.reconciles),
    pending: after.pending,
    queueWaitSeconds: minus(after.queueWaitSeconds, before.queueWaitSeconds),
    workSeconds: minus(after.workSeconds, before.workSeconds),
  };
}

/** vhost-broker alone: the order controller and the built-in topology controller in one process. */
export const builtinBackend: Backend = {
  name: "builtin",
  orderController: "rabbitmqvhost",
  topologyController: (kind) => `topology-${kind}`,
  async start(options) {
    const operator = await OperatorProcess.start({
      args: [`--max-concurrent-reconciles=${options.workers}`, "--log-level=info"],
      cwd: options.cwd,
      launch: launchNode(builtMain, options.cwd),
      logFile: options.logFile,
      keepLogs: false,
    });
    return {
      counters: async () => countersOf(parseMetrics(await operator.metrics())),
      stop: async () => {
        await operator.stop();
      },
    };
  },
};
