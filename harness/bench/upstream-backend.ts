// The upstream RabbitMQ Messaging Topology Operator as the benchmark's peer: vhost-broker runs only its
// order controller (--topology-controller=false) and upstream's operator, started through the local
// environment (harness/world/upstream-topology.ts), serves the topology objects. Its /metrics (controller-
// runtime's) add its Kubernetes requests, reconciles, queue, CPU and memory to vhost-broker's. It counts
// no broker requests, so the broker figures of a run on this backend are not measured (NaN, shown n/a).
import { builtMain, launchNode, OperatorProcess } from "../operator/operator-process.ts";
import {
  startUpstreamTopology,
  stopUpstreamTopology,
  upstreamBackendArgs,
} from "../world/upstream-topology.ts";
import { freePort } from "../world/ports.ts";
import { BENCH_ORDER_ARGS, counterMetrics, countersOf, type Backend, type Counters } from "./backend.ts";
import { parseMetrics, type Sample } from "../probes/prometheus.ts";

/** Both processes' counters as one: sums, with the broker's requests unknown. */
function combined(broker: Counters, upstream: Counters): Counters {
  const add = (a: Record<string, number>, b: Record<string, number>) => {
    const out = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  return {
    apiReads: broker.apiReads + upstream.apiReads,
    apiWrites: broker.apiWrites + upstream.apiWrites,
    // Upstream's operator does not say what it writes: its writes are the table's "another process".
    apiWritesBy: broker.apiWritesBy,
    brokerReads: Number.NaN,
    brokerWrites: Number.NaN,
    openBaoRequests: broker.openBaoRequests,
    openBaoWrites: broker.openBaoWrites,
    rssBytes: broker.rssBytes + upstream.rssBytes,
    heapUsedBytes: broker.heapUsedBytes,
    cpuSeconds: broker.cpuSeconds + upstream.cpuSeconds,
    reconciles: add(broker.reconciles, upstream.reconciles),
    pending: broker.pending + upstream.pending,
    queueWaitSeconds: add(broker.queueWaitSeconds, upstream.queueWaitSeconds),
    workSeconds: add(broker.workSeconds, upstream.workSeconds),
    leaseTransitions: broker.leaseTransitions,
    leaseRequests: broker.leaseRequests,
  };
}

export const upstreamBackend: Backend = {
  name: "upstream",
  orderController: "rabbitmqvhost",
  // controller-runtime names a controller after its kind, lower-cased.
  topologyController: (kind) => kind.replace(/s$/, ""),
  async start(options) {
    const metricsPort = await freePort();
    await startUpstreamTopology({ workers: options.workers, metricsAddress: `127.0.0.1:${metricsPort}` });
    const operator = await OperatorProcess.start({
      args: [
        ...upstreamBackendArgs,
        `--max-concurrent-reconciles=${options.workers}`,
        ...BENCH_ORDER_ARGS,
        "--log-level=info",
      ],
      cwd: options.cwd,
      launch: launchNode(builtMain, options.cwd, options.nodeFlags),
      logFile: options.logFile,
      keepLogs: false,
    });
    // Its metrics server may start listening just after its controllers report their workers.
    const upstreamMetrics = async (): Promise<Sample[]> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return parseMetrics(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
        } catch (error) {
          if (attempt >= 20) throw error;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    };
    return {
      counters: async () =>
        combined(
          countersOf(parseMetrics(await operator.metrics(counterMetrics))),
          countersOf(await upstreamMetrics()),
        ),
      stop: async () => {
        await operator.stop();
        await stopUpstreamTopology();
      },
    };
  },
};
