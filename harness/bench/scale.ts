// The benchmark's scale phase (`--phases=scale`, issue 50): many orders spread over the local
// environment's brokers (each broker creates vhosts one at a time, so one broker would bound the run),
// with unrelated Secrets and ConfigMaps beside them, through one operator (the chart's two replicas).
// In order: the unrelated objects; the operator alone; the cold start (all orders applied at once, until
// each broker's and then every order is Ready); a restart (until every order and child is seen again,
// with the writes it caused); the steady state (requests per hour); a rotation of every order over a
// rotation window that opens once, at T0, for `--scale-window-minutes` W (the orders' spec.rotation set
// to an interval of W + 1 minutes, so that each is due before T0 and none again inside the window), until
// every order switched and its superseded generation is swept; the teardown. Memory: the operator's RSS
// alone, after the cold start and after the restart; each broker's RSS before and after its vhosts.
// The sizing guide of docs/performance.md is drawn from it. Not part of `--phases=all`.
import { mkdirSync } from "node:fs";
import type { RabbitMQVhost } from "../../src/api/index.ts";
import { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { releaseOperatorLock } from "../operator/operator-process.ts";
import { freshNamespace } from "../world/kube.ts";
import { createWorld, destroyWorld, isReady, type World } from "../world/world.ts";
import { delta, perItem, seenAll, type Backend, type Counters, type RunningBackend } from "./backend.ts";
import { benchBrokerInfo, brokerLabel, worldOn, type BenchBroker, type BrokerInfo } from "./brokers.ts";
import { buildOperator } from "./build.ts";
import { range, sleep as sleepFor, timed, until as untilHolds } from "./concurrency.ts";
import { cpuSnapshot, machineCpu, partRssBytes, type MachineCpu } from "./machine.ts";
import { applyOrders, deleteOrders, OrderWatch, type OrderSet } from "./orders.ts";
import { minuteSpread, onceAt, type MinuteSpread } from "./window-spread.ts";
import { windowedMoment, windowTail, type RotationWindow } from "../../src/orders/core/generations/window.ts";
import { mib, perHour } from "./scale-table.ts";
import { createUnrelated } from "./unrelated.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A broker of the phase and how many of the orders go to it. */
export interface ScaleBroker {
  broker: BenchBroker;
  orders: number;
}

/**
 * How `total` orders fall on the brokers: a broker given a count gets it, the others share the rest
 * evenly (the first ones one more where it does not divide). Throws on counts that do not add up.
 */
export function assignOrders(total: number, counts: (number | undefined)[]): number[] {
  const fixed = counts.reduce<number>((sum, c) => sum + (c ?? 0), 0);
  const open = counts.filter((c) => c === undefined).length;
  if (counts.length === 0) throw new Error("no broker to spread the orders over");
  if (fixed > total) throw new Error(`the brokers' counts add up to ${fixed}, more than the ${total} orders`);
  if (open === 0 && fixed !== total)
    throw new Error(`the brokers' counts add up to ${fixed}, not the ${total} orders`);
  const rest = total - fixed;
  let nth = 0;
  return counts.map((c) => c ?? Math.floor(rest / open) + (nth++ < rest % open ? 1 : 0));
}

/** The orders' rotation interval in minutes: longer than the window, so that none falls due twice in it. */
export const scaleIntervalMinutes = (windowMinutes: number): number => windowMinutes + 1;

/**
 * T0, the window's opening: the first whole minute at least `leadMs` after `now` (the time the orders'
 * passes take to take up the window) and after every order's rotation falls due (`lastDue`).
 */
export function windowStart(now: number, leadMs: number, lastDue: number): number {
  return Math.ceil(Math.max(now + leadMs, lastDue + 5_000) / MINUTE) * MINUTE;
}

export interface ScaleConfig {
  backend: Backend;
  brokers: ScaleBroker[];
  /** Unrelated Secrets, and as many ConfigMaps, created before the operator starts. */
  unrelated: number;
  steadyMs: number;
  /** Between the memory reading after the restart's passes and the later one. */
  memoryWaitMs: number;
  windowMinutes: number;
  gracePeriod: string;
  workers: number;
  workdir: string;
  nodeFlags: readonly string[];
  log: (line: string) => void;
  signal?: AbortSignal;
}

/** The operator's RSS and JS heap at one moment. */
export interface MemoryReading {
  rssBytes: number;
  heapUsedBytes: number;
}

export interface ScaleReport {
  config: Omit<ScaleConfig, "backend" | "brokers" | "log" | "signal"> & {
    backend: string;
    brokers: (BrokerInfo & { orders: number })[];
    orders: number;
    interval: string;
  };
  unrelatedMs: number;
  memory: {
    /** The operator alone, among the unrelated objects, before any order. */
    idle: MemoryReading;
    /** Settled after the cold start. */
    cold: MemoryReading;
    /** Settled after the restart's passes, and `memoryWaitMs` later. */
    restart: MemoryReading;
    later: MemoryReading;
  };
  /** Each broker's RSS (its processes') before the cold start and after it, in the order of config.brokers. */
  brokerMemory: { beforeBytes: number; afterBytes: number }[];
  coldStart: {
    ms: number;
    applyMs: number;
    /** From the first apply until each broker's orders were all Ready. */
    perBrokerMs: number[];
    perOrder: Counters;
    machine: MachineCpu;
  };
  /** From the stop until every order and child was reconciled again; counters since the new start. */
  restart: { ms: number; counters: Counters };
  steady: { ms: number; counters: Counters };
  rotation: {
    schedule: string;
    windowStart: string;
    windowEnd: string;
    /** The window's spec applied to every order, until its passes settled: per order. */
    scheduleMs: number;
    schedulePerOrder: Counters;
    /** Whether those passes had settled before T0 (else the window opened among them). */
    settledBeforeWindow: boolean;
    /** From T0 until every order delivered generation 2, and until every superseded one was swept. */
    switchedMs: number;
    sweptMs: number;
    /** From T0 until settled after the sweep. */
    perOrder: Counters;
    machine: MachineCpu;
    /** Each order's switch (status.lastRotation of generation 2) per minute of the window. */
    switches: MinuteSpread;
    /** Orders left on generation 1 with their nextRotation in a later window. */
    slipped: number;
  };
  teardownMs: number;
  durationMs: number;
}

/** What the steps of the phase share. */
interface ScaleRun {
  config: ScaleConfig;
  n: number;
  sets: OrderSet[];
  watches: OrderWatch[];
  op: RunningBackend;
  start: () => Promise<RunningBackend>;
  until: (what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs?: number) => Promise<void>;
  sleep: (ms: number) => Promise<void>;
}

/** Each broker's orders are applied (and deleted) at once, about 16 requests in flight over all. */
const perSet = (sets: readonly OrderSet[]) => Math.max(1, Math.floor(16 / sets.length));

const reading = (c: Counters): MemoryReading => ({ rssBytes: c.rssBytes, heapUsedBytes: c.heapUsedBytes });
const ms = (text: string | undefined): number => (text ? Date.parse(text) : NaN);

/** The phase on its own: its worlds, its unrelated objects and its operator, all gone again at the end. */
export async function runScale(config: ScaleConfig): Promise<ScaleReport> {
  const started = Date.now();
  const { log, backend } = config;
  const n = config.brokers.reduce((sum, b) => sum + b.orders, 0);
  const logFile = `${config.workdir}/operator-${backend.name}-scale.log`;
  const start = () =>
    backend.start({ workers: config.workers, cwd: config.workdir, logFile, nodeFlags: config.nodeFlags });
  mkdirSync(config.workdir, { recursive: true });
  let world: World | undefined;
  const worlds: World[] = [];
  const namespaces: string[] = [];
  const watches: OrderWatch[] = [];
  let operator: RunningBackend | undefined;
  let sets: OrderSet[] = [];
  try {
    const buildMs = await timed(buildOperator);
    log(`built dist/ in ${(buildMs / 1000).toFixed(1)} s: the operator runs as the image runs it`);
    const w = (world = await createWorld("bench"));
    const rest = new KubeRest(w.cluster.kubeconfig);
    for (const [i, b] of config.brokers.entries()) {
      const bw =
        b.broker.part === "rabbitmq" ? w : await worldOn(w, `bench-${b.broker.part}`, b.broker.broker);
      if (bw !== w) worlds.push(bw);
      const names = range(b.orders).map((j) => `scale-${i}-${j}`);
      sets.push({
        rest,
        namespace: bw.tenantNs,
        controlPlane: bw.controlPlane,
        names,
        gracePeriod: config.gracePeriod,
      });
      watches.push(new OrderWatch(rest, bw.tenantNs));
      log(
        `scale: ${b.orders} orders on ${brokerLabel(benchBrokerInfo(b.broker))}, tenant namespace ${bw.tenantNs}`,
      );
    }
    const unrelatedNs = await freshNamespace(w.cluster, "bench-unrelated");
    namespaces.push(unrelatedNs);
    const unrelatedMs = await timed(() => createUnrelated(rest, unrelatedNs, config.unrelated));
    log(
      `scale: ${config.unrelated} unrelated Secrets and ConfigMaps in ${(unrelatedMs / 1000).toFixed(1)} s`,
    );

    operator = await start();
    const run: ScaleRun = {
      config,
      n,
      sets,
      watches,
      op: operator,
      start: async () => (operator = run.op = await start()),
      until: (what, check, timeoutMs, everyMs = 1_000) =>
        untilHolds(what, check, timeoutMs, everyMs, config.signal),
      sleep: (t) => sleepFor(Math.max(0, t), config.signal),
    };
    await run.sleep(5_000);
    const idle = reading(await run.op.counters());
    const brokerBefore = config.brokers.map((b) => partRssBytes(b.broker.part));
    const coldStart = await coldStartStep(run);
    const brokerAfter = config.brokers.map((b) => partRssBytes(b.broker.part));
    const cold = reading(await run.op.counters());
    log(
      `memory: operator ${mib(idle.rssBytes)} alone, ${mib(cold.rssBytes)} after the cold start; brokers ${brokerAfter.map(mib).join(", ")}`,
    );
    const { restart, afterRestart, later } = await restartStep(run, () => (operator = undefined));
    const steady = await steadyStep(run);
    const rotation = await rotationStep(run);
    const teardownMs = await teardownStep(run);
    sets = [];
    return {
      config: {
        backend: backend.name,
        brokers: config.brokers.map((b) => ({ ...benchBrokerInfo(b.broker), orders: b.orders })),
        orders: n,
        unrelated: config.unrelated,
        steadyMs: config.steadyMs,
        memoryWaitMs: config.memoryWaitMs,
        windowMinutes: config.windowMinutes,
        interval: `${scaleIntervalMinutes(config.windowMinutes)}m`,
        gracePeriod: config.gracePeriod,
        workers: config.workers,
        workdir: config.workdir,
        nodeFlags: config.nodeFlags,
      },
      unrelatedMs,
      memory: { idle, cold, restart: afterRestart, later },
      brokerMemory: brokerBefore.map((beforeBytes, i) => ({
        beforeBytes,
        afterBytes: brokerAfter[i] ?? NaN,
      })),
      coldStart,
      restart,
      steady,
      rotation,
      teardownMs,
      durationMs: Date.now() - started,
    };
  } finally {
    // What is left goes while an operator still runs (it tears the orders down), then the operator.
    try {
      if (world && !operator)
        operator = await start().catch((e: unknown) => (log(`clean-up: ${String(e)}`), undefined));
      for (const set of sets) await deleteOrders(set).catch((e: unknown) => log(`clean-up: ${String(e)}`));
      for (const watch of watches) await watch.stop();
      for (const other of worlds)
        await destroyWorld(other, 60 * MINUTE).catch((e: unknown) => log(`clean-up: ${String(e)}`));
      await destroyWorld(world, 60 * MINUTE).catch((e: unknown) => log(`clean-up: ${String(e)}`));
      for (const ns of namespaces)
        await world?.cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
    } finally {
      await operator?.stop();
      releaseOperatorLock();
    }
  }
}

/** Nothing queued and no worker busy: the passes a step brought are over. */
const settled = (run: ScaleRun) =>
  run.until("the operator to settle", async () => (await run.op.counters()).pending === 0, 30 * MINUTE);

/** Every order applied at once, until each broker's orders and then all are Ready; settled after. */
async function coldStartStep(run: ScaleRun): Promise<ScaleReport["coldStart"]> {
  const { config, n, sets, watches } = run;
  const before = await run.op.counters();
  const cpuBefore = cpuSnapshot();
  const first = performance.now();
  const applyMs = await timed(() => Promise.all(sets.map((set) => applyOrders(set, 1, perSet(sets)))));
  const perBrokerMs: number[] = sets.map(() => NaN);
  await run.until(
    `${n} orders Ready`,
    async () => {
      for (const [i, set] of sets.entries()) {
        if (!Number.isNaN(perBrokerMs[i])) continue;
        if ((await watches[i]!.census(set, undefined, config.signal)).ready === set.names.length)
          perBrokerMs[i] = performance.now() - first;
      }
      return perBrokerMs.every((t) => !Number.isNaN(t));
    },
    3 * HOUR,
    500,
  );
  const coldMs = performance.now() - first;
  const during = delta(before, await run.op.counters());
  const machine = machineCpu(cpuBefore, cpuSnapshot(), during.cpuSeconds);
  config.log(
    `cold start: ${(during.apiWrites / n).toFixed(1)} API writes and ${((during.cpuSeconds / n) * 1000).toFixed(1)} ms of operator CPU per order; ${n} orders Ready in ${(coldMs / 1000).toFixed(1)} s (per broker ${perBrokerMs.map((t) => (t / 1000).toFixed(1)).join(", ")} s)`,
  );
  await settled(run);
  await run.sleep(10_000);
  return { ms: coldMs, applyMs, perBrokerMs, perOrder: perItem(during, n), machine };
}

/** The operator stopped and started again, until every order and child is seen; its memory after. */
async function restartStep(run: ScaleRun, stopped: () => void) {
  const { config, n } = run;
  await run.op.stop();
  stopped();
  const from = performance.now();
  await run.start();
  await run.until(
    "every object seen again",
    async () => seenAll(config.backend, await run.op.counters(), n),
    HOUR,
    500,
  );
  const ms = performance.now() - from;
  await run.sleep(5_000);
  const counters = await run.op.counters();
  config.log(
    `restart: every order seen again after ${(ms / 1000).toFixed(1)} s, ${counters.apiWrites} API writes`,
  );
  await settled(run);
  await run.sleep(10_000);
  const afterRestart = reading(await run.op.counters());
  await run.sleep(config.memoryWaitMs);
  const later = reading(await run.op.counters());
  config.log(`memory after the restart: ${mib(afterRestart.rssBytes)}, ${mib(later.rssBytes)} later`);
  return { restart: { ms, counters }, afterRestart, later };
}

/** Nothing changes for `steadyMs`: the requests the drift checks make. */
async function steadyStep(run: ScaleRun): Promise<ScaleReport["steady"]> {
  const before = await run.op.counters();
  await run.sleep(run.config.steadyMs);
  const counters = delta(before, await run.op.counters());
  run.config.log(
    `steady state: ${(run.config.steadyMs / MINUTE).toFixed(2)} min observed; per 1,000 orders per hour ${perHour(counters, run.config.steadyMs, run.n)}`,
  );
  return { ms: run.config.steadyMs, counters };
}

/** Every order's rotation over one window, until each switched and its superseded generation is swept. */
async function rotationStep(run: ScaleRun): Promise<ScaleReport["rotation"]> {
  const { config, n, sets, watches } = run;
  const W = config.windowMinutes;
  const intervalMs = scaleIntervalMinutes(W) * MINUTE;
  const all = async () =>
    (await Promise.all(sets.map((set, i) => watches[i]!.orders(set, config.signal)))).flat();
  const lastDue = Math.max(...(await all()).map((o) => ms(o.status?.lastRotation) + intervalMs));
  // The orders' passes on the new spec must be over before the window opens: about 20 ms an order.
  const t0 = windowStart(Date.now(), MINUTE + n * 20, lastDue);
  const end = t0 + W * MINUTE;
  const schedule = onceAt(new Date(t0));
  const rotation = {
    interval: `${scaleIntervalMinutes(W)}m`,
    gracePeriod: config.gracePeriod,
    window: { schedule, timeZone: "UTC", duration: `${W}m` },
  };
  config.log(`rotation: window "${schedule}" UTC, ${W} min from ${new Date(t0).toISOString()}`);
  let before = await run.op.counters();
  const scheduleMs = await timed(async () => {
    await Promise.all(sets.map((set) => applyOrders({ ...set, rotation }, 1, perSet(sets))));
    await settled(run);
  });
  const schedulePerOrder = perItem(delta(before, await run.op.counters()), n);
  const settledBeforeWindow = Date.now() < t0;
  if (!settledBeforeWindow) config.log("rotation: the window opened before the orders' passes settled");
  await run.sleep(t0 - Date.now());
  before = await run.op.counters();
  const cpuBefore = cpuSnapshot();
  const census = async (generation?: number) =>
    Promise.all(sets.map((set, i) => watches[i]!.census(set, generation, config.signal)));
  // An order still on generation 1 whose nextRotation lies beyond the window went to the next window: it
  // is counted, not waited for. So is, for the moment, one whose successor was under way when the
  // window closed (its nextRotation moves on too): the count is taken again once the passes settled.
  const count = async () => {
    const orders = await all();
    const switched = orders.filter((o) => isReady(o) && (o.status?.passwordGeneration ?? 0) >= 2);
    return { switched, slipped: orders.filter((o) => goneToNextWindow(o, end)) };
  };
  let tally = await count();
  for (;;) {
    await run.until(
      `${n} orders switched or gone to the next window`,
      async () => {
        tally = await count();
        return tally.switched.length + tally.slipped.length === n;
      },
      W * MINUTE + HOUR,
      1_000,
    );
    await settled(run);
    tally = await count();
    if (tally.switched.length + tally.slipped.length === n) break;
  }
  const slipped = tally.slipped.length;
  // The last switch, read from the orders: the settling above may have taken longer.
  const switchedMs = Math.max(0, ...tally.switched.map((o) => ms(o.status?.lastRotation))) - t0;
  logSlipped(
    config.log,
    tally.slipped,
    { ...rotation.window, durationMs: W * MINUTE },
    { t0, end, intervalMs },
  );
  const machine = machineCpu(cpuBefore, cpuSnapshot(), delta(before, await run.op.counters()).cpuSeconds);
  await run.until(
    `${n - slipped} orders swept`,
    async () => (await census()).every((c, i) => c.swept === sets[i]!.names.length),
    HOUR,
    1_000,
  );
  const sweptMs = Date.now() - t0;
  await settled(run);
  const perOrder = perItem(delta(before, await run.op.counters()), n);
  const switches = minuteSpread(
    (await all())
      .filter((o) => (o.status?.passwordGeneration ?? 0) >= 2)
      .map((o) => ms(o.status?.lastRotation)),
    t0,
    W,
    n,
    windowTail(W * MINUTE),
  );
  config.log(
    `rotation: ${perOrder.apiWrites.toFixed(1)} API writes and ${((perOrder.cpuSeconds / n) * 1000).toFixed(1)} ms of operator CPU per order; switched ${(switchedMs / 1000).toFixed(1)} s and swept ${(sweptMs / 1000).toFixed(1)} s after the window opened; per minute ${switches.perMinute.map((m) => m.count).join(" / ")}`,
  );
  return {
    schedule,
    windowStart: new Date(t0).toISOString(),
    windowEnd: new Date(end).toISOString(),
    scheduleMs,
    schedulePerOrder,
    settledBeforeWindow,
    slipped,
    switchedMs,
    sweptMs,
    perOrder,
    machine,
    switches,
  };
}

/** An order still on generation 1 whose nextRotation lies at or past the window's `end`. */
const goneToNextWindow = (o: RabbitMQVhost, end: number): boolean =>
  (o.status?.passwordGeneration ?? 0) < 2 && ms(o.status?.nextRotation) >= end;

/**
 * The orders gone to the next window, by the minute of the moment their uid gave them in this one:
 * where in the window the lost rotations' moments fall says what lost them (a late queue loses the end).
 */
function logSlipped(
  log: (line: string) => void,
  slipped: RabbitMQVhost[],
  window: RotationWindow,
  at: { t0: number; end: number; intervalMs: number },
): void {
  if (slipped.length === 0) return;
  const minutes = new Array<number>(Math.ceil((at.end - at.t0) / MINUTE)).fill(0);
  for (const o of slipped) {
    const due = new Date(ms(o.status?.lastRotation) + at.intervalMs);
    const moment = windowedMoment(window, o.metadata?.uid ?? "", due);
    if (moment) minutes[Math.floor((moment.getTime() - at.t0) / MINUTE)]! += 1;
  }
  log(
    `rotation: ${slipped.length} gone to the next window; their moments in it per minute ${minutes.join(" / ")}`,
  );
}

/** Every order deleted, until none is left. */
async function teardownStep(run: ScaleRun): Promise<number> {
  const { config, n, sets, watches } = run;
  const teardownMs = await timed(async () => {
    await Promise.all(sets.map((set) => deleteOrders(set, perSet(sets))));
    await run.until(
      "every order gone",
      async () =>
        (await Promise.all(sets.map((set, i) => watches[i]!.census(set, undefined, config.signal)))).every(
          (c) => c.total === 0,
        ),
      2 * HOUR,
    );
  });
  config.log(`teardown: ${n} orders gone in ${(teardownMs / 1000).toFixed(1)} s`);
  return teardownMs;
}
