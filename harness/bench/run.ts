// One benchmark run against the local environment: the floors first, then the operator's phases on
// the same machine minutes later, so that every ratio compares figures of one run. See
// docs/performance.md for what each figure means.
import { mkdirSync } from "node:fs";
import { bindingKind, exchangeKind, queueKind, vhostKind } from "../../src/api/index.ts";
import { apiPath, KubeRest, type KubeList } from "../../src/runtime/port/kube-rest.ts";
import { releaseOperatorLock } from "../operator/operator-process.ts";
import { createWorld, destroyWorld, type World } from "../world/world.ts";
import { freshNamespace } from "../world/kube.ts";
import { delta, perItem, seenAll, type Backend, type Counters, type RunningBackend } from "./backend.ts";
import { buildOperator } from "./build.ts";
import { range, sleep as sleepFor, timed, until as untilHolds } from "./concurrency.ts";
import { benchBrokerInfo, vhostCount, worldOn, type BenchBroker, type BrokerInfo } from "./brokers.ts";
import { apiFloor, brokerFloor, topologyBrokerFloor, type BrokerFloor, type Floor } from "./floors.ts";
import { cpuSnapshot, machineCpu, type MachineCpu } from "./machine.ts";
import { applyOrders, deleteOrders, OrderWatch, type OrderSet } from "./orders.ts";
import { topologyAlone, topologyLabel } from "./topology.ts";
import { lanePhases, type LanesResult } from "./lanes.ts";
import { scaleRestart, type ScaleRestartResult } from "./scale-restart.ts";
import { createUnrelated } from "./unrelated.ts";

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

/** The broker of a run: what the report names it, the world whose bus it is, and whether every phase runs. */
interface RunBroker {
  info: BrokerInfo;
  world: World;
  full: boolean;
}

/** What the phases of one backend work with. */
type PhaseArgs = [
  config: BenchConfig,
  backend: Backend,
  on: RunBroker,
  rest: KubeRest,
  namespaces: string[],
  running: { operator?: RunningBackend; backend?: Backend },
];

/** Every phase on one backend, its orders named after it; leaves no order and no operator behind. */
async function runPhases(...args: PhaseArgs): Promise<BackendRun> {
  const [, , on, rest] = args;
  const watch = new OrderWatch(rest, on.world.tenantNs);
  try {
    return await phases(watch, ...args);
  } finally {
    await watch.stop();
  }
}

async function phases(
  watch: OrderWatch,
  ...[config, backend, on, rest, namespaces, running]: PhaseArgs
): Promise<BackendRun> {
  const { log, orders: n, signal } = config;
  const w = on.world;
  const census = (set: OrderSet, generation?: number) => watch.census(set, generation, signal);
  const until = (what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 1_000) =>
    untilHolds(what, check, timeoutMs, everyMs, signal);
  const sleep = (ms: number) => sleepFor(ms, signal);
  // How often the watched orders are counted while waiting.
  const poll = 500;
  const logFile = `${config.workdir}/operator-${backend.name}-${on.info.part}.log`;
  const start = async (workers = config.workers) => {
    running.backend = backend;
    running.operator = await backend.start({
      workers,
      cwd: config.workdir,
      logFile,
      nodeFlags: config.nodeFlags,
    });
    return running.operator;
  };
  const stop = async () => {
    await running.operator?.stop();
    running.operator = undefined;
  };
  const allSeen = async (op: RunningBackend, orders: number) => seenAll(backend, await op.counters(), orders);
  const orderSet = (names: string[]): OrderSet => ({
    rest,
    namespace: w.tenantNs,
    controlPlane: w.controlPlane,
    names,
    gracePeriod: config.gracePeriod,
  });

  // Cold start: N orders at once, until every one is Ready (delivered and backed up).
  const main = orderSet(range(n).map((i) => `bench-${backend.name}-${i}`));
  let op = await start();
  // Nothing queued and no worker busy: the passes a phase brought are over.
  const settled = () =>
    until("the operator to settle", async () => (await op.counters()).pending === 0, 10 * 60_000);
  // The operator alone, before any order: what no cache or queue can shrink.
  await sleep(5_000);
  const idleBytes = (await op.counters()).rssBytes;
  let before = await op.counters();
  let cpuBefore = cpuSnapshot();
  const coldMs = await timed(async () => {
    await applyOrders(main, 1);
    await until(`${n} orders Ready`, async () => (await census(main)).ready === n, 60 * 60_000, poll);
  });
  const cold = delta(before, await op.counters());
  const coldMachine = machineCpu(cpuBefore, cpuSnapshot(), cold.cpuSeconds);
  log(`cold start: ${n} orders Ready in ${(coldMs / 1000).toFixed(1)} s`);
  await settled();
  const withOrdersBytes = (await op.counters()).rssBytes;

  // Restart with N converged orders.
  await stop();
  const restartStarted = performance.now();
  op = await start();
  await until("every object seen again", () => allSeen(op, n), 30 * 60_000, 500);
  const restartMs = performance.now() - restartStarted;
  await sleep(5_000);
  const restart = await op.counters();
  log(`restart: every order seen again after ${(restartMs / 1000).toFixed(1)} s`);

  // Steady state: nothing changes for a while.
  before = await op.counters();
  await sleep(config.steadyMs);
  const steady = delta(before, await op.counters());
  log(`steady state: ${(config.steadyMs / 60_000).toFixed(2)} min observed`);

  // Rotation storm: every order's generation raised at once.
  before = await op.counters();
  cpuBefore = cpuSnapshot();
  const due = performance.now();
  const applyMs = await timed(() => applyOrders(main, 2));
  await until(`${n} orders switched`, async () => (await census(main, 2)).delivered === n, 60 * 60_000, poll);
  const switchedMs = performance.now() - due;
  const toSwitch = delta(before, await op.counters());
  const rotationMachine = machineCpu(cpuBefore, cpuSnapshot(), toSwitch.cpuSeconds);
  await until(`${n} orders swept`, async () => (await census(main)).swept === n, 60 * 60_000, poll);
  const sweptMs = performance.now() - due;
  await settled();
  const rotation = delta(before, await op.counters());
  log(
    `rotation storm: switched after ${(switchedMs / 1000).toFixed(1)} s, swept after ${(sweptMs / 1000).toFixed(1)} s`,
  );

  // Memory with unrelated Secrets and ConfigMaps, measured after a restart among them: on the first
  // broker only, as the lanes, the restart at scale and the workers' sweep after the teardown.
  const memory = on.full ? await memoryPhase() : undefined;
  async function memoryPhase(): Promise<BackendRun["memory"]> {
    const unrelatedNs = await freshNamespace(w.cluster, "bench-unrelated");
    namespaces.push(unrelatedNs);
    await createUnrelated(rest, unrelatedNs, config.unrelated);
    await stop();
    op = await start();
    await until("every object seen again", () => allSeen(op, n), 30 * 60_000, 500);
    // Settled, as the figure after the cold start: the restart's verification passes are over, and what is
    // left is what the operator holds for as long as nothing changes.
    await settled();
    await sleep(10_000);
    const withUnrelated = await op.counters();
    // A minute later V8 has had time to collect what the restart's burst of passes left behind (a heap
    // snapshot at the first reading found about a third of the used heap to be garbage).
    await sleep(config.memoryWaitMs);
    const withUnrelatedLater = await op.counters();
    log(
      `memory: ${mib(withUnrelated.rssBytes)} MiB RSS with ${config.unrelated} unrelated Secrets and ConfigMaps, ${mib(withUnrelatedLater.rssBytes)} MiB ${(config.memoryWaitMs / 1000).toFixed(0)} s later`,
    );
    await w.cluster.core.deleteNamespace({ name: unrelatedNs });
    namespaces.splice(namespaces.indexOf(unrelatedNs), 1);
    return {
      idleBytes,
      withOrdersBytes,
      withUnrelatedBytes: withUnrelated.rssBytes,
      heapWithUnrelatedBytes: withUnrelated.heapUsedBytes,
      laterWithUnrelatedBytes: withUnrelatedLater.rssBytes,
      heapLaterWithUnrelatedBytes: withUnrelatedLater.heapUsedBytes,
    };
  }

  // Topology alone: N queues, exchanges and bindings under one vhost.
  const topology = await topologyPhase(config, w, rest, op);

  // Teardown of the N orders.
  const teardownMs = await timed(async () => {
    await deleteOrders(main);
    await until("every order gone", async () => (await census(main)).total === 0, 60 * 60_000, 1_000);
  });
  log(`teardown: ${n} orders gone in ${(teardownMs / 1000).toFixed(1)} s`);

  // A lane per broker: 2N orders on two brokers against N on one, and a healthy broker beside a hung one.
  // The lanes' second broker is rabbitmq-2: they need the run's to be another.
  if (on.full && config.lanesOrders > 0 && on.info.part === "rabbitmq-2")
    log("lanes: skipped, their second broker (rabbitmq-2) is this run's");
  const lanes =
    on.full && config.lanesOrders > 0 && on.info.part !== "rabbitmq-2"
      ? await lanePhases({
          w,
          rest,
          orders: config.lanesOrders,
          hungOrders: config.hungOrders,
          gracePeriod: config.gracePeriod,
          counters: () => op.counters(),
          namespaces,
          log,
          signal,
        })
      : undefined;

  // The restart among many topology objects, with no order left.
  const perKind = on.full ? Math.floor(config.scaleObjects / 3) : 0;
  const scale =
    perKind > 0
      ? await scaleRestart({
          backend,
          w,
          rest,
          perKind,
          orders: orderSet,
          operator: op,
          restart: async () => {
            await stop();
            return (op = await start());
          },
          log,
          signal,
        })
      : undefined;

  // Workers per controller: a smaller cold start at each worker count.
  const sweep: SweepPoint[] = [];
  for (const workers of on.full ? config.sweep : []) {
    await stop();
    op = await start(workers);
    const sample = orderSet(range(config.sweepOrders).map((i) => `sweep-${backend.name}-${workers}-${i}`));
    before = await op.counters();
    const ms = await timed(async () => {
      await applyOrders(sample, 1);
      await until(
        `${config.sweepOrders} orders Ready`,
        async () => (await census(sample)).ready === sample.names.length,
        30 * 60_000,
        500,
      );
    });
    const during = delta(before, await op.counters());
    sweep.push({ workers, ms, queueWaitSeconds: during.queueWaitSeconds });
    log(`workers ${workers}: ${config.sweepOrders} orders Ready in ${(ms / 1000).toFixed(1)} s`);
    await deleteOrders(sample);
    await until(
      "the sweep's orders gone",
      async () => (await census(sample)).total === 0,
      30 * 60_000,
      1_000,
    );
  }
  // The next backend starts from a cluster without this one's operator.
  await stop();

  return {
    backend: backend.name,
    broker: on.info,
    coldStart: { ms: coldMs, perOrder: perItem(cold, n), machine: coldMachine },
    restart: { ms: restartMs, counters: restart },
    rotation: {
      applyMs,
      switchedMs,
      sweptMs,
      perOrder: perItem(rotation, n),
      toSwitch: perItem(toSwitch, n),
      machine: rotationMachine,
    },
    steady: { ms: config.steadyMs, counters: steady },
    ...(memory && { memory }),
    topology,
    teardownMs,
    ...(lanes && { lanes }),
    ...(scale && { scale }),
    sweep,
  };
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

/** The topology-alone load on the running backend, then until its objects are gone again. */
async function topologyPhase(
  config: BenchConfig,
  w: World,
  rest: KubeRest,
  op: RunningBackend,
): Promise<TopologyResult> {
  const { log, orders: n, signal } = config;
  const before = await op.counters();
  const { ms, applyMs, counters } = await topologyAlone(rest, w, n, () => op.counters(), signal);
  log(`topology: ${3 * n} objects Ready in ${(ms / 1000).toFixed(1)} s`);
  // The operator releases their finalizers: the next phase starts once they are gone.
  await untilHolds(
    "the topology objects gone",
    async () => {
      const left = await Promise.all(
        [bindingKind, exchangeKind, queueKind, vhostKind].map((k) =>
          rest.request<KubeList>("GET", apiPath(k, w.cpNs), {
            query: { limit: 1, labelSelector: topologyLabel },
          }),
        ),
      );
      return left.every((l) => l.items.length === 0);
    },
    10 * 60_000,
    1_000,
    signal,
  );
  return { objects: 3 * n, ms, applyMs, perObject: perItem(delta(before, counters), 3 * n) };
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
