// One benchmark run against the local environment: the floors first, then the operator's phases on
// the same machine minutes later, so that every ratio compares figures of one run. See
// docs/performance.md for what each figure means.
import { mkdirSync } from "node:fs";
import { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { releaseOperatorLock } from "../operator/operator-process.ts";
import { createWorld, destroyWorld, type World } from "../world/world.ts";
import { freshNamespace } from "../world/kube.ts";
import type { Backend, Counters, RunningBackend } from "./backend.ts";
import { buildOperator } from "./build.ts";
import { timed } from "./concurrency.ts";
import { benchBrokerInfo, vhostCount, worldOn, type BenchBroker, type BrokerInfo } from "./brokers.ts";
import { apiFloor, brokerFloor, topologyBrokerFloor, type BrokerFloor, type Floor } from "./floors.ts";
import type { MachineCpu } from "./machine.ts";
import type { LanesResult } from "./lanes.ts";
import type { ScaleRestartResult } from "./scale-restart.ts";
import { runPhases, topologyPhase, type RunBroker } from "./phases.ts";

export interface BenchConfig {
  /** What serves the topology objects; with several, each runs every phase after the same floors. */
  backends: Backend[];
  /**
   * The brokers the orders go to, each with its floors, one after the other: the first with every phase,
   * the others with those the broker bounds (cold start, restart, steady state, rotation, topology,
   * teardown). Every backend runs on each.
   */
  brokers: BenchBroker[];
  /** all: every phase; topology: only the API server's floor and the topology-alone load. */
  phases: "all" | "topology";
  orders: number;
  /** Workers per controller in every phase but the sweep. */
  workers: number;
  steadyMs: number;
  /** Between the two memory readings after the restart among the unrelated objects. */
  memoryWaitMs: number;
  /** Unrelated Secrets, and as many ConfigMaps, for the memory figure. */
  unrelated: number;
  gracePeriod: string;
  /** Worker counts tried, each on a cold start of `sweepOrders` orders; empty skips the sweep. */
  sweep: number[];
  sweepOrders: number;
  /** Orders of each step of the lane-per-broker phases (lanes.ts); 0 skips them. */
  lanesOrders: number;
  /** Orders of the hung broker beside which the lanes' healthy orders are timed. */
  hungOrders: number;
  /** Topology objects (Queues, Exchanges and Bindings, a third each) of the restart at scale; 0 skips it. */
  scaleObjects: number;
  /** Orders timed on the settled operator, and restarts with an order, in the restart at scale. */
  prioritySamples: number;
  /** Items of each concurrency's trial run in the floors. */
  floorSample: number;
  brokerConcurrency: number[];
  apiConcurrency: number[];
  workdir: string;
  /** V8 flags of the operator processes instead of the image's (harness/operator/operator-process.ts). */
  nodeFlags: readonly string[];
  log: (line: string) => void;
  /** Ends the run at its next wait, through its clean-up. */
  signal?: AbortSignal;
}

export interface SweepPoint {
  workers: number;
  ms: number;
  /** Seconds keys waited in each controller's queue during that cold start. */
  queueWaitSeconds: Record<string, number>;
}

/** A broker's floors, measured before any operator ran. */
export interface BrokerFloors extends BrokerInfo {
  /** Absent with `phases: topology`. */
  brokerFloor?: BrokerFloor;
  /** The broker's floor for the topology-alone load's requests. */
  topologyFloor: Floor;
}

export interface BenchReport {
  config: Omit<BenchConfig, "log" | "backends" | "brokers" | "signal"> & {
    backends: string[];
    brokers: BrokerInfo[];
  };
  /** The first broker's floors (as in the reports from before `--brokers`). */
  brokerFloor?: BrokerFloor;
  apiFloor: Floor;
  topologyFloor: Floor;
  /** Every broker's floors, in the order of `config.brokers`. */
  brokers: BrokerFloors[];
  /** One run of the phases per broker and backend: the first broker's on every backend, then the next's. */
  runs: (BackendRun | TopologyRun)[];
  durationMs: number;
}

/**
 * The topology-alone load's result. perObject: the operator's requests from the first apply until all are
 * Ready, per object; applyMs: how long the benchmark's own applies of the 3N objects took.
 */
export interface TopologyResult {
  objects: number;
  ms: number;
  applyMs: number;
  perObject: Counters;
}

/** A backend's run with `phases: topology`. */
export interface TopologyRun {
  backend: string;
  broker: BrokerInfo;
  topology: TopologyResult;
}

export interface BackendRun {
  backend: string;
  /** The broker its orders went to. */
  broker: BrokerInfo;
  /** machine: the cores' busy time and who used it, over the phase. */
  coldStart: { ms: number; perOrder: Counters; machine: MachineCpu };
  restart: { ms: number; counters: Counters };
  /** toSwitch and machine: from the due until all switched; perOrder until settled after the sweep. */
  rotation: {
    applyMs: number;
    switchedMs: number;
    sweptMs: number;
    perOrder: Counters;
    toSwitch: Counters;
    machine: MachineCpu;
  };
  steady: { ms: number; counters: Counters };
  /** Absent on a broker but the first (the operator's memory does not depend on the broker). */
  memory?: {
    idleBytes: number;
    withOrdersBytes: number;
    withUnrelatedBytes: number;
    heapWithUnrelatedBytes: number;
    /** The same a minute after the restart's passes. */
    laterWithUnrelatedBytes: number;
    heapLaterWithUnrelatedBytes: number;
  };
  topology: TopologyResult;
  teardownMs: number;
  /** Absent when the run skipped them (--lanes-orders=0, or a broker but the first). */
  lanes?: LanesResult;
  /** Absent when the run skipped it (--scale-objects=0, or a broker but the first). */
  scale?: ScaleRestartResult;
  /** Empty when the run skipped it (--sweep=, or a broker but the first). */
  sweep: SweepPoint[];
}

export async function runBench(config: BenchConfig): Promise<BenchReport> {
  const started = Date.now();
  const { log, orders: n } = config;
  mkdirSync(config.workdir, { recursive: true });
  let world: World | undefined;
  /** The worlds of the brokers but every test's, destroyed before the main one. */
  const worlds: World[] = [];
  const namespaces: string[] = [];
  const running: { operator?: RunningBackend; backend?: Backend } = {};
  try {
    const buildMs = await timed(buildOperator);
    log(`built dist/ in ${(buildMs / 1000).toFixed(1)} s: the operator runs as the image runs it`);
    world = await createWorld("bench");
    const w = world;
    const rest = new KubeRest(w.cluster.kubeconfig);
    log(`world: ControlPlane namespace ${w.cpNs}, tenant namespace ${w.tenantNs}; logs in ${config.workdir}`);

    // The floors, before any operator runs: the API server's once, each broker's, for every backend.
    const onlyTopology = config.phases === "topology";
    const floors: BrokerFloors[] = [];
    for (const b of config.brokers) {
      const label = `RabbitMQ ${b.version} (${b.part})`;
      const brokerFloorResult = onlyTopology
        ? undefined
        : await brokerFloor(
            b.broker,
            n,
            config.floorSample,
            config.brokerConcurrency,
            config.signal,
            vhostCount,
          );
      if (brokerFloorResult) {
        const g = brokerFloorResult.growth;
        log(
          `broker floor on ${label}: ${n} orders in ${(brokerFloorResult.ms / 1000).toFixed(1)} s at ${brokerFloorResult.concurrency}; ` +
            `${g.items} more in ${(g.emptyMs / 1000).toFixed(1)} s holding ${g.emptyHeld} vhosts, ${(g.heldMs / 1000).toFixed(1)} s holding ${g.held}`,
        );
      }
      const topologyFloor = await topologyBrokerFloor(
        b.broker,
        n,
        config.floorSample,
        config.brokerConcurrency,
        config.signal,
      );
      log(`topology floor on ${label}: ${3 * n} objects in ${(topologyFloor.ms / 1000).toFixed(1)} s`);
      floors.push({
        ...benchBrokerInfo(b),
        ...(brokerFloorResult && { brokerFloor: brokerFloorResult }),
        topologyFloor,
      });
    }
    const floorNs = await freshNamespace(w.cluster, "bench-floor");
    namespaces.push(floorNs);
    const apiFloorResult = await apiFloor(
      rest,
      floorNs,
      n,
      config.floorSample,
      config.apiConcurrency,
      config.signal,
    );
    log(
      `API floor: ${n} orders in ${(apiFloorResult.ms / 1000).toFixed(1)} s at ${apiFloorResult.concurrency}`,
    );

    const runs: (BackendRun | TopologyRun)[] = [];
    for (const [index, b] of config.brokers.entries()) {
      // Every test's broker is the world's; another has a ControlPlane of its own.
      const bw = b.part === "rabbitmq" ? w : await worldOn(w, `bench-${b.part}`, b.broker);
      if (bw !== w) worlds.push(bw);
      const on: RunBroker = { info: benchBrokerInfo(b), world: bw, full: index === 0 };
      for (const backend of config.backends) {
        log(
          `backend ${backend.name} on RabbitMQ ${b.version} (${b.part}): ${onlyTopology ? "the topology-alone load" : on.full ? "every phase" : "the phases the broker bounds"}`,
        );
        runs.push(
          onlyTopology
            ? await runTopologyOnly(config, backend, on, rest, running)
            : await runPhases(config, backend, on, rest, namespaces, running),
        );
      }
    }
    const kept: Omit<BenchConfig, "log" | "backends" | "brokers" | "signal"> & {
      log?: unknown;
      backends?: unknown;
      brokers?: unknown;
      signal?: unknown;
    } = { ...config };
    delete kept.log;
    delete kept.backends;
    delete kept.brokers;
    delete kept.signal;
    const [first] = floors;
    if (!first) throw new Error("no broker to measure");
    return {
      config: {
        ...kept,
        backends: config.backends.map((b) => b.name),
        brokers: config.brokers.map(benchBrokerInfo),
      },
      ...(first.brokerFloor && { brokerFloor: first.brokerFloor }),
      apiFloor: apiFloorResult,
      topologyFloor: first.topologyFloor,
      brokers: floors,
      runs,
      durationMs: Date.now() - started,
    };
  } finally {
    // The world goes while an operator still runs (it tears the orders down), then the operator.
    const logFile = `${config.workdir}/operator.log`;
    try {
      const backend = running.backend ?? config.backends[0];
      if (world && !running.operator && backend)
        running.operator = await backend
          .start({ workers: config.workers, cwd: config.workdir, logFile, nodeFlags: config.nodeFlags })
          .catch((e: unknown) => (log(`clean-up: ${String(e)}`), undefined));
      for (const other of worlds)
        await destroyWorld(other, 10 * 60_000).catch((e: unknown) => log(`clean-up: ${String(e)}`));
      await destroyWorld(world, 10 * 60_000).catch((e: unknown) => log(`clean-up: ${String(e)}`));
      for (const ns of namespaces)
        await world?.cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
    } finally {
      await running.operator?.stop();
      releaseOperatorLock();
    }
  }
}

/** `phases: topology`: the backend started, the topology-alone load, the backend stopped. */
async function runTopologyOnly(
  config: BenchConfig,
  backend: Backend,
  on: RunBroker,
  rest: KubeRest,
  running: { operator?: RunningBackend; backend?: Backend },
): Promise<TopologyRun> {
  running.backend = backend;
  const op = await backend.start({
    workers: config.workers,
    cwd: config.workdir,
    nodeFlags: config.nodeFlags,
    logFile: `${config.workdir}/operator-${backend.name}-${on.info.part}.log`,
  });
  running.operator = op;
  const topology = await topologyPhase(config, on.world, rest, op);
  await op.stop();
  running.operator = undefined;
  return { backend: backend.name, broker: on.info, topology };
}
