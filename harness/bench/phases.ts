// The phases of one backend on one broker (runBench's runs): the cold start, the restart, the steady
// state, the rotation storm, the memory among unrelated objects, the topology-alone load, the teardown,
// the lanes, the restart at scale and the workers' sweep, one function each, sharing a PhaseRun.
import { bindingKind, exchangeKind, queueKind, vhostKind } from "../../src/api/index.ts";
import { apiPath, type KubeList, type KubeRest } from "../../src/runtime/port/kube-rest.ts";
import type { World } from "../world/world.ts";
import { freshNamespace } from "../world/kube.ts";
import { delta, perItem, seenAll, type Backend, type RunningBackend } from "./backend.ts";
import type { BrokerInfo } from "./brokers.ts";
import { range, sleep as sleepFor, timed, until as untilHolds } from "./concurrency.ts";
import { cpuSnapshot, machineCpu } from "./machine.ts";
import { applyOrders, deleteOrders, OrderWatch, type OrderSet } from "./orders.ts";
import { topologyAlone, topologyLabel } from "./topology.ts";
import { lanePhases, type LanesResult } from "./lanes.ts";
import { scaleRestart, type ScaleRestartResult } from "./scale-restart.ts";
import { createUnrelated } from "./unrelated.ts";
import type { BackendRun, BenchConfig, SweepPoint, TopologyResult } from "./run.ts";

/** The broker of a run: what the report names it, the world whose bus it is, and whether every phase runs. */
export interface RunBroker {
  info: BrokerInfo;
  world: World;
  full: boolean;
}

/** What the phases of one backend share: the running operator, the run's orders, and the ways to wait. */
class PhaseRun {
  /** The leader of the running operator; every phase starts with one. */
  op!: RunningBackend;
  /** The N orders of the cold start, the restart, the steady state, the rotation and the teardown. */
  readonly main: OrderSet;
  private readonly logFile: string;

  readonly config: BenchConfig;
  readonly backend: Backend;
  readonly on: RunBroker;
  readonly rest: KubeRest;
  readonly namespaces: string[];
  private readonly running: { operator?: RunningBackend; backend?: Backend };
  private readonly watch: OrderWatch;

  constructor(
    config: BenchConfig,
    backend: Backend,
    on: RunBroker,
    rest: KubeRest,
    namespaces: string[],
    running: { operator?: RunningBackend; backend?: Backend },
    watch: OrderWatch,
  ) {
    this.config = config;
    this.backend = backend;
    this.on = on;
    this.rest = rest;
    this.namespaces = namespaces;
    this.running = running;
    this.watch = watch;
    this.logFile = `${config.workdir}/operator-${backend.name}-${on.info.part}.log`;
    this.main = this.orderSet(range(config.orders).map((i) => `bench-${backend.name}-${i}`));
  }

  orderSet(names: string[]): OrderSet {
    const w = this.on.world;
    return {
      rest: this.rest,
      namespace: w.tenantNs,
      controlPlane: w.controlPlane,
      names,
      gracePeriod: this.config.gracePeriod,
    };
  }

  census(set: OrderSet, generation?: number) {
    return this.watch.census(set, generation, this.config.signal);
  }

  until(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 1_000) {
    return untilHolds(what, check, timeoutMs, everyMs, this.config.signal);
  }

  sleep(ms: number) {
    return sleepFor(ms, this.config.signal);
  }

  async start(workers = this.config.workers): Promise<RunningBackend> {
    const { config } = this;
    this.running.backend = this.backend;
    this.running.operator = await this.backend.start({
      workers,
      cwd: config.workdir,
      logFile: this.logFile,
      nodeFlags: config.nodeFlags,
    });
    return (this.op = this.running.operator);
  }

  async stop(): Promise<void> {
    await this.running.operator?.stop();
    this.running.operator = undefined;
  }

  /** Nothing queued and no worker busy: the passes a phase brought are over. */
  settled() {
    return this.until(
      "the operator to settle",
      async () => (await this.op.counters()).pending === 0,
      10 * 60_000,
    );
  }

  /** After a start: every one of `orders` orders and their children reconciled again, nothing queued. */
  allSeen(orders: number) {
    return this.until(
      "every object seen again",
      async () => seenAll(this.backend, await this.op.counters(), orders),
      30 * 60_000,
      500,
    );
  }
}

/** How often the watched orders are counted while waiting. */
const POLL_MS = 500;

/** Every phase on one backend, its orders named after it; leaves no order and no operator behind. */
export async function runPhases(
  config: BenchConfig,
  backend: Backend,
  on: RunBroker,
  rest: KubeRest,
  namespaces: string[],
  running: { operator?: RunningBackend; backend?: Backend },
): Promise<BackendRun> {
  const watch = new OrderWatch(rest, on.world.tenantNs);
  try {
    return await phases(new PhaseRun(config, backend, on, rest, namespaces, running, watch));
  } finally {
    await watch.stop();
  }
}

async function phases(run: PhaseRun): Promise<BackendRun> {
  const { config, on } = run;
  await run.start();
  // The operator alone, before any order: what no cache or queue can shrink.
  await run.sleep(5_000);
  const idleBytes = (await run.op.counters()).rssBytes;
  const coldStart = await coldStartPhase(run);
  const withOrdersBytes = (await run.op.counters()).rssBytes;
  const restart = await restartPhase(run);
  const steady = await steadyPhase(run);
  const rotation = await rotationPhase(run);
  // The memory among unrelated objects, the lanes, the restart at scale and the workers' sweep measure
  // the operator, not the broker: on the first broker only.
  const memory = on.full ? await memoryPhase(run, idleBytes, withOrdersBytes) : undefined;
  const topology = await topologyPhase(config, on.world, run.rest, run.op);
  const teardownMs = await teardownPhase(run);
  const lanes = on.full ? await lanesPhase(run) : undefined;
  const scale = on.full ? await scalePhase(run) : undefined;
  const sweep = on.full ? await sweepPhase(run) : [];
  // The next backend starts from a cluster without this one's operator.
  await run.stop();
  return {
    backend: run.backend.name,
    broker: on.info,
    coldStart,
    restart,
    steady,
    rotation,
    ...(memory && { memory }),
    topology,
    teardownMs,
    ...(lanes && { lanes }),
    ...(scale && { scale }),
    sweep,
  };
}

/** N orders at once, until every one is Ready (delivered and backed up); settled after. */
async function coldStartPhase(run: PhaseRun): Promise<BackendRun["coldStart"]> {
  const { orders: n, log } = run.config;
  const before = await run.op.counters();
  const cpuBefore = cpuSnapshot();
  const ms = await timed(async () => {
    await applyOrders(run.main, 1);
    await run.until(
      `${n} orders Ready`,
      async () => (await run.census(run.main)).ready === n,
      60 * 60_000,
      POLL_MS,
    );
  });
  const cold = delta(before, await run.op.counters());
  const machine = machineCpu(cpuBefore, cpuSnapshot(), cold.cpuSeconds);
  log(`cold start: ${n} orders Ready in ${(ms / 1000).toFixed(1)} s`);
  await run.settled();
  return { ms, perOrder: perItem(cold, n), machine };
}

/** The operator restarted with N converged orders, until every order and child is seen again. */
async function restartPhase(run: PhaseRun): Promise<BackendRun["restart"]> {
  await run.stop();
  const started = performance.now();
  await run.start();
  await run.allSeen(run.config.orders);
  const ms = performance.now() - started;
  await run.sleep(5_000);
  run.config.log(`restart: every order seen again after ${(ms / 1000).toFixed(1)} s`);
  return { ms, counters: await run.op.counters() };
}

/** Nothing changes for a while. */
async function steadyPhase(run: PhaseRun): Promise<BackendRun["steady"]> {
  const { steadyMs, log } = run.config;
  const before = await run.op.counters();
  await run.sleep(steadyMs);
  const counters = delta(before, await run.op.counters());
  log(`steady state: ${(steadyMs / 60_000).toFixed(2)} min observed`);
  return { ms: steadyMs, counters };
}

/** The rotation storm: every order's generation raised at once, until switched and swept. */
async function rotationPhase(run: PhaseRun): Promise<BackendRun["rotation"]> {
  const { orders: n, log } = run.config;
  const before = await run.op.counters();
  const cpuBefore = cpuSnapshot();
  const due = performance.now();
  const applyMs = await timed(() => applyOrders(run.main, 2));
  await run.until(
    `${n} orders switched`,
    async () => (await run.census(run.main, 2)).delivered === n,
    60 * 60_000,
    POLL_MS,
  );
  const switchedMs = performance.now() - due;
  const toSwitch = delta(before, await run.op.counters());
  const machine = machineCpu(cpuBefore, cpuSnapshot(), toSwitch.cpuSeconds);
  await run.until(
    `${n} orders swept`,
    async () => (await run.census(run.main)).swept === n,
    60 * 60_000,
    POLL_MS,
  );
  const sweptMs = performance.now() - due;
  await run.settled();
  const rotation = delta(before, await run.op.counters());
  log(
    `rotation storm: switched after ${(switchedMs / 1000).toFixed(1)} s, swept after ${(sweptMs / 1000).toFixed(1)} s`,
  );
  return {
    applyMs,
    switchedMs,
    sweptMs,
    perOrder: perItem(rotation, n),
    toSwitch: perItem(toSwitch, n),
    machine,
  };
}

/** Memory with unrelated Secrets and ConfigMaps, measured after a restart among them. */
async function memoryPhase(
  run: PhaseRun,
  idleBytes: number,
  withOrdersBytes: number,
): Promise<BackendRun["memory"]> {
  const { config } = run;
  const w = run.on.world;
  const unrelatedNs = await freshNamespace(w.cluster, "bench-unrelated");
  run.namespaces.push(unrelatedNs);
  await createUnrelated(run.rest, unrelatedNs, config.unrelated);
  await run.stop();
  await run.start();
  await run.allSeen(config.orders);
  // Settled, as the figure after the cold start: the restart's verification passes are over, and what is
  // left is what the operator holds for as long as nothing changes.
  await run.settled();
  await run.sleep(10_000);
  const withUnrelated = await run.op.counters();
  // A minute later V8 has had time to collect what the restart's burst of passes left behind (a heap
  // snapshot at the first reading found about a third of the used heap to be garbage).
  await run.sleep(config.memoryWaitMs);
  const later = await run.op.counters();
  config.log(
    `memory: ${mib(withUnrelated.rssBytes)} MiB RSS with ${config.unrelated} unrelated Secrets and ConfigMaps, ${mib(later.rssBytes)} MiB ${(config.memoryWaitMs / 1000).toFixed(0)} s later`,
  );
  await w.cluster.core.deleteNamespace({ name: unrelatedNs });
  run.namespaces.splice(run.namespaces.indexOf(unrelatedNs), 1);
  return {
    idleBytes,
    withOrdersBytes,
    withUnrelatedBytes: withUnrelated.rssBytes,
    heapWithUnrelatedBytes: withUnrelated.heapUsedBytes,
    laterWithUnrelatedBytes: later.rssBytes,
    heapLaterWithUnrelatedBytes: later.heapUsedBytes,
  };
}

/** The N orders deleted, until none is left. */
async function teardownPhase(run: PhaseRun): Promise<number> {
  const { orders: n, log } = run.config;
  const ms = await timed(async () => {
    await deleteOrders(run.main);
    await run.until("every order gone", async () => (await run.census(run.main)).total === 0, 60 * 60_000);
  });
  log(`teardown: ${n} orders gone in ${(ms / 1000).toFixed(1)} s`);
  return ms;
}

/**
 * A lane per broker: 2N orders on two brokers against N on one, and a healthy broker beside a hung one.
 * The lanes' second broker is rabbitmq-2: they need the run's to be another.
 */
async function lanesPhase(run: PhaseRun): Promise<LanesResult | undefined> {
  const { config } = run;
  if (config.lanesOrders === 0) return undefined;
  if (run.on.info.part === "rabbitmq-2") {
    config.log("lanes: skipped, their second broker (rabbitmq-2) is this run's");
    return undefined;
  }
  return lanePhases({
    w: run.on.world,
    rest: run.rest,
    orders: config.lanesOrders,
    hungOrders: config.hungOrders,
    gracePeriod: config.gracePeriod,
    counters: () => run.op.counters(),
    namespaces: run.namespaces,
    log: config.log,
    signal: config.signal,
  });
}

/** The restart among many topology objects, with no order left. */
async function scalePhase(run: PhaseRun): Promise<ScaleRestartResult | undefined> {
  const perKind = Math.floor(run.config.scaleObjects / 3);
  if (perKind === 0) return undefined;
  return scaleRestart({
    backend: run.backend,
    w: run.on.world,
    rest: run.rest,
    perKind,
    samples: run.config.prioritySamples,
    orders: (names) => run.orderSet(names),
    operator: run.op,
    restart: async () => {
      await run.stop();
      return run.start();
    },
    log: run.config.log,
    signal: run.config.signal,
  });
}

/** Workers per controller: a smaller cold start at each worker count. */
async function sweepPhase(run: PhaseRun): Promise<SweepPoint[]> {
  const { config } = run;
  const sweep: SweepPoint[] = [];
  for (const workers of config.sweep) {
    await run.stop();
    await run.start(workers);
    const sample = run.orderSet(
      range(config.sweepOrders).map((i) => `sweep-${run.backend.name}-${workers}-${i}`),
    );
    const before = await run.op.counters();
    const ms = await timed(async () => {
      await applyOrders(sample, 1);
      await run.until(
        `${config.sweepOrders} orders Ready`,
        async () => (await run.census(sample)).ready === sample.names.length,
        30 * 60_000,
        POLL_MS,
      );
    });
    const during = delta(before, await run.op.counters());
    sweep.push({ workers, ms, queueWaitSeconds: during.queueWaitSeconds });
    config.log(`workers ${workers}: ${config.sweepOrders} orders Ready in ${(ms / 1000).toFixed(1)} s`);
    await deleteOrders(sample);
    await run.until(
      "the sweep's orders gone",
      async () => (await run.census(sample)).total === 0,
      30 * 60_000,
    );
  }
  return sweep;
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

/** The topology-alone load on the running backend, then until its objects are gone again. */
export async function topologyPhase(
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
