// What serves the orders' topology objects during a run. The built-in backend is the chart's two
// replicas (harness/operator/operator-process.ts, leader election at the default timings) with the built-in
// topology controller, the leader's figures counted; a backend that runs another
// topology operator beside the order controller (issue 16's upstream peer) implements the same
// interface, adding its process's figures to the counters.
import * as k8s from "@kubernetes/client-node";
import { builtMain, launchNode, OperatorProcess, releaseOperatorLock } from "../operator/operator-process.ts";
import { testCluster } from "../world/kube.ts";
import { parseMetrics, sum, type Sample } from "../probes/prometheus.ts";
import { writesByTarget } from "./writes.ts";

/** Cumulative figures of the operator process(es) since their start. */
export interface Counters {
  apiReads: number;
  apiWrites: number;
  /** API writes by `resource subresource verb` (writes.ts), the leader election's Lease included. */
  apiWritesBy: Record<string, number>;
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
  /** The operator's Lease changed holders this often (0 for a backend without leader election). */
  leaseTransitions: number;
  /** The leader election's own requests for its Lease, left out of apiReads and apiWrites. */
  leaseRequests: number;
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
  /** V8 flags of the operator processes (default the image's). */
  nodeFlags?: readonly string[];
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

/**
 * The order controller's settings of every benchmark operator: the rotation storm raises every order of
 * one tenant namespace at once, which --namespace-rotation-limit (60 per 10 minutes by default) would
 * hold back past its 60th; the storm stands for many tenants' rotations, so it runs unbounded.
 */
export const BENCH_ORDER_ARGS = ["--namespace-rotation-limit=0"];

const writes = ["POST", "PUT", "PATCH", "DELETE"];

/**
 * The metrics countersOf reads, asked for by name: a whole scrape renders every cached object's Ready
 * series (90,000 at 30,000 topology objects, half a second of the operator's CPU), which the benchmark,
 * reading every second, would charge to the phase it measures. Grouped metrics first (prom-client's
 * CPU user time collects the total, the heap's total its used).
 */
export const counterMetrics = [
  "rest_client_requests_total",
  "vhost_broker_api_writes_total",
  "vhost_broker_leader_election_requests_total",
  "vhost_broker_backend_request_duration_seconds",
  "process_resident_memory_bytes",
  "nodejs_heap_size_total_bytes",
  "nodejs_heap_size_used_bytes",
  "process_cpu_user_seconds_total",
  "process_cpu_seconds_total",
  "controller_runtime_reconcile_total",
  "workqueue_depth",
  "controller_runtime_active_workers",
  "workqueue_queue_duration_seconds",
  "workqueue_work_duration_seconds",
];

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
  // The Lease's renewals are the leadership's cost, a GET and a PUT every retry period whatever the
  // orders: counted apart, so that "0 writes" of a restart or a steady state means the controllers'.
  const api = (method: string | string[]) =>
    sum(samples, "rest_client_requests_total", { method }) -
    sum(samples, "vhost_broker_leader_election_requests_total", { method });
  return {
    apiReads: api("GET"),
    apiWrites: api(writes),
    apiWritesBy: writesByTarget(samples),
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
    leaseTransitions: 0,
    leaseRequests: sum(samples, "vhost_broker_leader_election_requests_total"),
  };
}

/** The counters that grew from `before` to `after` (gauges: the value of `after`). */
export function delta(before: Counters, after: Counters): Counters {
  const minus = (a: Record<string, number>, b: Record<string, number>) =>
    Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]));
  return {
    apiReads: after.apiReads - before.apiReads,
    apiWrites: after.apiWrites - before.apiWrites,
    apiWritesBy: minus(after.apiWritesBy, before.apiWritesBy),
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
    leaseTransitions: after.leaseTransitions - before.leaseTransitions,
    leaseRequests: after.leaseRequests - before.leaseRequests,
  };
}

/** `c`'s requests per item (order or object): its counts divided by `n`, its gauges as they are. */
export const perItem = (c: Counters, n: number): Counters => ({
  ...c,
  apiReads: c.apiReads / n,
  apiWrites: c.apiWrites / n,
  apiWritesBy: Object.fromEntries(Object.entries(c.apiWritesBy).map(([k, v]) => [k, v / n])),
  brokerReads: c.brokerReads / n,
  brokerWrites: c.brokerWrites / n,
  openBaoRequests: c.openBaoRequests / n,
  openBaoWrites: c.openBaoWrites / n,
});

/**
 * Whether `c` (counted since the start) shows every one of `orders` orders and of their Vhost, User and
 * Permission children reconciled at least once, and nothing queued or in flight: a restart's passes are over.
 */
export const seenAll = (backend: Backend, c: Counters, orders: number): boolean =>
  (c.reconciles[backend.orderController] ?? 0) >= orders &&
  (["vhosts", "users", "permissions"] as const).every(
    (k) => (c.reconciles[backend.topologyController(k)] ?? 0) >= orders,
  ) &&
  c.pending === 0;

const LEASE_NAMESPACE = "default";

/** The Lease's spec.leaseTransitions (each change of holder adds one). */
async function leaseTransitions(lease: string): Promise<number> {
  const api = testCluster("management").config.makeApiClient(k8s.CoordinationV1Api);
  const object = await api.readNamespacedLease({ name: lease, namespace: LEASE_NAMESPACE });
  return object.spec?.leaseTransitions ?? 0;
}

/**
 * vhost-broker alone: the order controller and the built-in topology controller, as the chart's two
 * replicas on a Lease of their own. The first leads; its figures are the run's. Should it lose the
 * Lease under the load, it exits and the phase fails, and the Lease's transitions say so.
 */
export const builtinBackend: Backend = {
  name: "builtin",
  orderController: "rabbitmqvhost",
  topologyController: (kind) => `topology-${kind}`,
  async start(options) {
    const lease = `vb-bench-${Date.now().toString(36)}`;
    const replica = (identity: string, logFile: string) =>
      OperatorProcess.start({
        args: [`--max-concurrent-reconciles=${options.workers}`, ...BENCH_ORDER_ARGS, "--log-level=info"],
        cwd: options.cwd,
        launch: launchNode(builtMain, options.cwd, options.nodeFlags),
        logFile,
        keepLogs: false,
        replica: { lease, identity: `${lease}-${identity}` },
      });
    const leader = await replica("a", options.logFile);
    let standby: OperatorProcess | undefined;
    // A start that fails half-way stops what it started: no operator outlives the run.
    try {
      standby = await replica("b", options.logFile.replace(/(\.log)?$/, "-standby.log"));
      for (let waited = 0; !(await leader.leading()); waited += 250) {
        if (waited > 60_000) throw new Error("the first replica did not lead within 60 s");
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    } catch (error) {
      await leader.stop();
      await standby?.stop();
      throw error;
    }
    const transitionsAtStart = await leaseTransitions(lease);
    return {
      counters: async () => ({
        ...countersOf(parseMetrics(await leader.metrics(counterMetrics))),
        leaseTransitions: (await leaseTransitions(lease)) - transitionsAtStart,
      }),
      stop: async () => {
        await leader.stop();
        await standby?.stop();
        releaseOperatorLock();
        await testCluster("management")
          .config.makeApiClient(k8s.CoordinationV1Api)
          .deleteNamespacedLease({ name: lease, namespace: LEASE_NAMESPACE })
          .catch(() => undefined);
      },
    };
  },
};
