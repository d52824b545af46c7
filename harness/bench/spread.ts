// The benchmark's spread phase (`--phases=spread`, issue 47): whether rotation windows spread a burst of
// orders' scheduled rotations evenly over the window, and keep every one inside it. N orders are created
// at once on the first broker, each with a window that opens once, at a minute T0 chosen
// `--spread-lead-minutes` ahead so that every first generation is live and its rotation due before it,
// for `--spread-window-minutes` W: every rotation is held until T0 and starts at the order's moment inside
// [T0, T0 + W). The load is a real window's: the interval (W + 3 minutes) lets no order fall due again
// before the window closed, and the grace period (W + 1 minute by default, never W or less) puts the
// sweeps of the superseded generations after it, as an interval of days and a grace of hours do against
// a nightly window. Per order, the rotation's start is the successor User child's creationTimestamp (a
// watch on the Users keeps it), and the switch is status.lastRotation when the order is first seen on
// generation 2. The phase prints the starts per minute against the even share N/W with the binomial
// standard deviation beside the deviation (each order's moment is an independent draw: a minute's count
// is Binomial(N, 1/W)), how many started outside the window, how many slipped to the next window (still
// on generation 1 after it, status.nextRotation beyond it), and status.nextRotation's spread as the
// orders showed it just before the window opened. About 14 minutes at 1,000 orders, most of it waiting
// for the window; not part of `--phases=all`.
import { mkdirSync } from "node:fs";
import { cpus, freemem, loadavg, totalmem } from "node:os";
import { pino } from "pino";
import type { RabbitMQVhost } from "../../src/api/index.ts";
import { userKind } from "../../src/api/index.ts";
import { parseDuration } from "../../src/runtime/base/duration.ts";
import { windowedMoment, windowTail, type RotationWindow } from "../../src/orders/core/generations/window.ts";
import { userChildName } from "../../src/orders/rabbitmq/naming.ts";
import { realClock } from "../../src/runtime/base/clock.ts";
import { Informer } from "../../src/runtime/port/informer.ts";
import { KubeRest, type KubeObject } from "../../src/runtime/port/kube-rest.ts";
import { releaseOperatorLock } from "../operator/operator-process.ts";
import { createWorld, destroyWorld, type World } from "../world/world.ts";
import { delta, type Backend, type RunningBackend } from "./backend.ts";
import { benchBrokerInfo, brokerLabel, worldOn, type BenchBroker, type BrokerInfo } from "./brokers.ts";
import { buildOperator } from "./build.ts";
import { range, sleep as sleepFor, timed, until as untilHolds } from "./concurrency.ts";
import { cpuSnapshot, machineCpu, type MachineCpu } from "./machine.ts";
import { applyOrders, deleteOrders, OrderWatch, type OrderSet } from "./orders.ts";
import { machineText } from "./table.ts";
import { minuteSpread, onceAt, type MinuteSpread } from "./window-spread.ts";

const MINUTE = 60_000;
/**
 * The orders' rotation interval, in minutes: the window and 3 more, so that an order that rotated at the
 * window's start falls due again 3 minutes after it closed, past the phase's watch (30 s after it). An
 * interval of a minute made the orders rotated in the window's first minute fall due again in its second,
 * which a real interval (days, against a window of hours) never does.
 */
export function spreadIntervalMinutes(windowMinutes: number): number {
  return windowMinutes + 3;
}
/**
 * The default `--spread-lead-minutes`: the interval and 3 minutes, for the first generations to go live
 * (1,000 orders in about 100 s on RabbitMQ 4.3) and their rotations to fall due before T0.
 */
export function defaultSpreadLeadMinutes(windowMinutes: number): number {
  return spreadIntervalMinutes(windowMinutes) + 3;
}
/**
 * The default grace period: the window and a minute, so that every superseded generation is swept after
 * the window closed (and after the phase's watch), not among its rotations.
 */
export function defaultSpreadGrace(windowMinutes: number): string {
  return `${windowMinutes + 1}m`;
}
/** A first generation whose rotation falls due later than this before T0 fails the phase. */
const DUE_MARGIN_MS = 5_000;
/** How long after the window closes the phase still watches for a rotation that starts outside it. */
const AFTER_WINDOW_MS = 30_000;

export interface SpreadConfig {
  /** The first of `--backend`: what serves the orders' topology objects. */
  backend: Backend;
  /** The first of `--brokers`. */
  broker: BenchBroker;
  orders: number;
  /** W: how long the window stays open. */
  windowMinutes: number;
  /** T0 is the first whole minute at least this long after the first apply; more than the interval. */
  leadMinutes: number;
  /** Longer than the window (see defaultSpreadGrace). */
  gracePeriod: string;
  workers: number;
  workdir: string;
  nodeFlags: readonly string[];
  log: (line: string) => void;
  signal?: AbortSignal;
}

/** Percentiles of `values` (ms), nearest rank. */
function percentiles(values: readonly number[]): { median: number; p99: number; max: number; min: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  return { median: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? NaN, min: sorted[0] ?? NaN };
}

export interface SpreadReport {
  config: {
    backend: string;
    broker: BrokerInfo;
    orders: number;
    windowMinutes: number;
    leadMinutes: number;
    interval: string;
    gracePeriod: string;
    workers: number;
    nodeFlags: readonly string[];
    workdir: string;
  };
  /** The window's cron schedule (UTC), its opening and its end. */
  schedule: string;
  windowStart: string;
  windowEnd: string;
  /** The N applies, 16 at a time. */
  createMs: number;
  /** From the first apply until every order was Ready on generation 1 with its nextRotation. */
  liveMs: number;
  /** The latest lastRotation + interval of the first generations, and how long before T0 it was. */
  lastDue: string;
  lastDueBeforeWindowMs: number;
  /** status.nextRotation of every order just before the window opened. */
  scheduled: MinuteSpread & {
    /** Orders whose nextRotation was the moment computed here from their uid and lastRotation. */
    asComputed: number;
    earliest: string;
    latest: string;
  };
  /** Orders seen on generation 2 or later before the window opened. */
  rotatedBefore: number;
  /** Each order's first rotation (its generation-2 User created), per minute of the window. */
  started: MinuteSpread;
  /** Orders with no generation-2 User by the window's end + 30 s. */
  notStarted: number;
  /**
   * Orders still on generation 1 at the window's end + 30 s whose status.nextRotation is at or after the
   * window's end: their moment was reached after the window closed and their rotation moved to the next
   * window. With the moments they had before the window, and the nextRotation they show now.
   */
  slipped: {
    count: number;
    momentsEarliest?: string;
    momentsLatest?: string;
    nextRotation?: string;
  };
  /** Later rotations (generation 3 and up: due again inside the window) inside and outside it. */
  laterInside: number;
  laterOutside: number;
  /** Seconds from the order's nextRotation to its generation-2 User's creationTimestamp (whole seconds). */
  startLagMs: { median: number; p99: number; max: number; min: number };
  /** Seconds from that creation to status.lastRotation (the switch). */
  switchLagMs: { median: number; p99: number; max: number; min: number };
  /** The machine over the window, the operator's share from its metrics. */
  machine: MachineCpu;
  /** The operator's API writes over the window, per order. */
  apiWritesPerOrder: number;
  durationMs: number;
}

const ms = (text: string | undefined): number => (text ? Date.parse(text) : NaN);

/** The spread phase on its own: the operator started, the world created, both gone again at the end. */
export async function runSpread(config: SpreadConfig): Promise<SpreadReport> {
  const started = Date.now();
  const { log, orders: n, signal, backend } = config;
  const sleep = (t: number) => sleepFor(Math.max(0, t), signal);
  const until = (what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 1_000) =>
    untilHolds(what, check, timeoutMs, everyMs, signal);
  let world: World | undefined;
  let bw: World | undefined;
  let operator: RunningBackend | undefined;
  let watch: OrderWatch | undefined;
  let users: Informer | undefined;
  let set: OrderSet | undefined;
  const logFile = `${config.workdir}/operator-${backend.name}-${config.broker.part}-spread.log`;
  const intervalMinutes = spreadIntervalMinutes(config.windowMinutes);
  const interval = `${intervalMinutes}m`;
  const intervalMs = intervalMinutes * MINUTE;
  // Refused before anything starts: a lead that leaves the first rotations due after T0 (the window would
  // take them from their due, not over all of it), a grace that sweeps inside the window.
  if (config.leadMinutes < intervalMinutes + 2)
    throw new Error(
      `--spread-lead-minutes ${config.leadMinutes} leaves no time for the first generations to go live and fall due (interval ${interval}) before the window: at least ${intervalMinutes + 2}, default ${defaultSpreadLeadMinutes(config.windowMinutes)}`,
    );
  const graceMs = parseDuration(config.gracePeriod);
  if (graceMs === undefined || graceMs <= config.windowMinutes * MINUTE)
    throw new Error(
      `--grace ${config.gracePeriod} would sweep superseded generations inside the ${config.windowMinutes}-minute window: give more than the window, default ${defaultSpreadGrace(config.windowMinutes)}`,
    );
  const start = () =>
    backend.start({ workers: config.workers, cwd: config.workdir, logFile, nodeFlags: config.nodeFlags });
  // The operator's working directory and logs (a spawn into a missing cwd fails as ENOENT of node).
  mkdirSync(config.workdir, { recursive: true });
  try {
    const buildMs = await timed(buildOperator);
    log(`built dist/ in ${(buildMs / 1000).toFixed(1)} s: the operator runs as the image runs it`);
    world = await createWorld("bench");
    bw =
      config.broker.part === "rabbitmq"
        ? world
        : await worldOn(world, `bench-${config.broker.part}`, config.broker.broker);
    const w = bw;
    const rest = new KubeRest(w.cluster.kubeconfig);
    log(`world: ControlPlane namespace ${w.cpNs}, tenant namespace ${w.tenantNs}; logs in ${config.workdir}`);
    operator = await start();
    const op = operator;
    watch = new OrderWatch(rest, w.tenantNs);
    const orders = watch;

    // Every User child's creationTimestamp, kept from the watch's add: a later rotation's sweep deletes
    // the generation-2 User of an order that rotated twice inside the window.
    const created = new Map<string, number>();
    users = new Informer({
      rest,
      kind: userKind,
      namespace: w.cpNs,
      clock: realClock,
      log: pino({ level: "warn" }),
      resyncMs: 0,
      watchRestartMs: 5 * 60_000,
    });
    const note = (o: KubeObject) => {
      const name = o.metadata?.name ?? "";
      const at = new Date(o.metadata?.creationTimestamp ?? NaN).getTime();
      if (!created.has(name) && Number.isFinite(at)) created.set(name, at);
    };
    users.addHandler({ add: note, update: (_, o) => note(o), delete: note });
    users.start();

    const names = range(n).map((i) => `spread-${backend.name}-${i}`);
    const firstApply = Date.now();
    const t0 = Math.ceil((firstApply + config.leadMinutes * MINUTE) / MINUTE) * MINUTE;
    const end = t0 + config.windowMinutes * MINUTE;
    const schedule = onceAt(new Date(t0));
    const window: RotationWindow = {
      schedule,
      timeZone: "UTC",
      durationMs: config.windowMinutes * MINUTE,
    };
    const iso = (t: number) => new Date(t).toISOString();
    const clock = (t: number) => iso(t).slice(11, 19);
    set = {
      rest,
      namespace: w.tenantNs,
      controlPlane: w.controlPlane,
      names,
      gracePeriod: config.gracePeriod,
      rotation: {
        interval,
        gracePeriod: config.gracePeriod,
        window: { schedule, timeZone: "UTC", duration: `${config.windowMinutes}m` },
      },
    };
    const mine = set;
    log(
      `spread: ${n} orders, interval ${interval}, grace ${config.gracePeriod}, window "${schedule}" UTC for ${config.windowMinutes} min: ${clock(t0)} to ${clock(end)}`,
    );
    const createMs = await timed(() => applyOrders(mine, 1));
    log(`spread: ${n} orders created in ${(createMs / 1000).toFixed(1)} s`);
    if (createMs > MINUTE) log(`spread: the applies took longer than a minute`);

    // Every first generation live, with the moment its rotation is held for.
    const isLive = (o: RabbitMQVhost) =>
      (o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false) &&
      o.status?.passwordGeneration === 1 &&
      o.status.lastRotation !== undefined &&
      o.status.nextRotation !== undefined;
    // Waited for until their rotations could no longer fall due before the window.
    let live = await orders.orders(mine, signal);
    while (live.filter(isLive).length < n && Date.now() < t0 - DUE_MARGIN_MS - intervalMs) {
      await sleep(500);
      live = await orders.orders(mine, signal);
    }
    const liveMs = Date.now() - firstApply;
    const notLive = n - live.filter(isLive).length;
    if (notLive > 0)
      throw new Error(
        `${notLive} of ${n} first generations not live ${Math.round(liveMs / 1000)} s after the first apply, too late for their rotations to fall due before the window opens at ${iso(t0)}: raise --spread-lead-minutes`,
      );
    const lastDue = Math.max(...live.map((o) => ms(o.status?.lastRotation) + intervalMs));
    log(
      `spread: every first generation live after ${(liveMs / 1000).toFixed(1)} s; the last rotation falls due at ${clock(lastDue)}, the window opens at ${clock(t0)}`,
    );
    if (!(lastDue < t0 - DUE_MARGIN_MS))
      throw new Error(
        `the last first generation's rotation falls due at ${iso(lastDue)}, not before the window opens at ${iso(t0)}: raise --spread-lead-minutes`,
      );

    // Until just before the window: nothing rotates, and each order shows its moment.
    let rotatedBefore = 0;
    while (Date.now() < t0 - 3_000) {
      const all = await orders.orders(mine, signal);
      rotatedBefore = Math.max(
        rotatedBefore,
        all.filter((o) => (o.status?.passwordGeneration ?? 0) >= 2).length,
      );
      await sleep(Math.min(5_000, t0 - 3_000 - Date.now()));
    }
    const shown = await orders.orders(mine, signal);
    const moments = new Map(shown.map((o) => [o.metadata?.name ?? "", ms(o.status?.nextRotation)]));
    const asComputed = shown.filter((o) => {
      const due = new Date(ms(o.status?.lastRotation) + intervalMs);
      const moment = windowedMoment(window, o.metadata?.uid ?? "", due);
      return moment?.getTime() === ms(o.status?.nextRotation);
    }).length;
    const scheduledTimes = [...moments.values()];
    log(`spread: ${asComputed} of ${n} nextRotation as computed from uid and lastRotation; the window opens`);

    // The window: note each order's switch (lastRotation when first seen on generation 2).
    const cpuBefore = cpuSnapshot();
    const countersBefore = await op.counters();
    const switched = new Map<string, number>();
    const key = (name: string) => ({ cluster: "", namespace: w.tenantNs, name });
    const generationTwo = (name: string) => created.get(userChildName(key(name), 2));
    let cpuAfter: ReturnType<typeof cpuSnapshot> | undefined;
    let countersAfter: typeof countersBefore | undefined;
    for (;;) {
      const now = Date.now();
      for (const o of await orders.orders(mine, signal)) {
        const name = o.metadata?.name ?? "";
        if (o.status?.passwordGeneration === 2 && !switched.has(name))
          switched.set(name, ms(o.status.lastRotation));
      }
      if (!cpuAfter && now >= end) {
        cpuAfter = cpuSnapshot();
        countersAfter = await op.counters();
        log(`spread: the window closed; watching ${AFTER_WINDOW_MS / 1000} s more`);
      }
      if (now >= end + AFTER_WINDOW_MS) break;
      await sleep(1_000);
    }
    const startTimes = names.map(generationTwo).filter((t): t is number => t !== undefined);
    // The orders the window closed on: still on generation 1, their rotation held for a later window.
    const slippedOrders = (await orders.orders(mine, signal)).filter(
      (o) => (o.status?.passwordGeneration ?? 0) < 2 && ms(o.status?.nextRotation) >= end,
    );
    const slippedMoments = slippedOrders
      .map((o) => moments.get(o.metadata?.name ?? ""))
      .filter((t): t is number => t !== undefined && Number.isFinite(t));
    const slippedNext = slippedOrders.map((o) => ms(o.status?.nextRotation));
    const slipped: SpreadReport["slipped"] = { count: slippedOrders.length };
    if (slippedOrders.length > 0) {
      slipped.momentsEarliest = iso(Math.min(...slippedMoments));
      slipped.momentsLatest = iso(Math.max(...slippedMoments));
      slipped.nextRotation = iso(Math.min(...slippedNext));
    }
    // Later rotations: every User child above generation 2 the watch saw.
    let laterInside = 0;
    let laterOutside = 0;
    for (const name of names)
      for (let g = 3; g <= config.windowMinutes + 3; g++) {
        const t = created.get(userChildName(key(name), g));
        if (t === undefined) continue;
        if (t >= t0 && t < end) laterInside++;
        else laterOutside++;
      }
    const startLag = names.flatMap((name) => {
      const t = generationTwo(name);
      const m = moments.get(name);
      return t === undefined || m === undefined ? [] : [t - m];
    });
    const switchLag = names.flatMap((name) => {
      const t = generationTwo(name);
      const s = switched.get(name);
      return t === undefined || s === undefined ? [] : [s - t];
    });
    const tail = windowTail(config.windowMinutes * MINUTE);
    const scheduled = minuteSpread(scheduledTimes, t0, config.windowMinutes, n, tail);
    const startedSpread = minuteSpread(startTimes, t0, config.windowMinutes, n, tail);
    const machine = machineCpu(
      cpuBefore,
      cpuAfter ?? cpuSnapshot(),
      delta(countersBefore, countersAfter ?? countersBefore).cpuSeconds,
    );
    const apiWrites = countersAfter ? delta(countersBefore, countersAfter).apiWrites : NaN;
    log(
      `spread: ${startTimes.length} of ${n} rotated; per minute ${startedSpread.perMinute.map((m) => m.count).join(" / ")} against ${startedSpread.even.toFixed(0)}; ${startedSpread.before + startedSpread.after + laterOutside} outside the window; ${slipped.count} slipped to the next window`,
    );

    // The orders go while the operator runs (it tears them down).
    const teardownMs = await timed(async () => {
      await deleteOrders(mine);
      await until(
        "the spread's orders gone",
        async () => (await orders.orders(mine, signal)).length === 0,
        30 * MINUTE,
      );
    });
    set = undefined;
    log(`spread: ${n} orders gone in ${(teardownMs / 1000).toFixed(1)} s`);

    return {
      config: {
        backend: backend.name,
        broker: benchBrokerInfo(config.broker),
        orders: n,
        windowMinutes: config.windowMinutes,
        leadMinutes: config.leadMinutes,
        interval,
        gracePeriod: config.gracePeriod,
        workers: config.workers,
        nodeFlags: config.nodeFlags,
        workdir: config.workdir,
      },
      schedule,
      windowStart: iso(t0),
      windowEnd: iso(end),
      createMs,
      liveMs,
      lastDue: iso(lastDue),
      lastDueBeforeWindowMs: t0 - lastDue,
      scheduled: {
        ...scheduled,
        asComputed,
        earliest: iso(Math.min(...scheduledTimes)),
        latest: iso(Math.max(...scheduledTimes)),
      },
      rotatedBefore,
      started: startedSpread,
      notStarted: n - startTimes.length,
      slipped,
      laterInside,
      laterOutside,
      startLagMs: percentiles(startLag),
      switchLagMs: percentiles(switchLag),
      machine,
      apiWritesPerOrder: apiWrites / n,
      durationMs: Date.now() - started,
    };
  } finally {
    // What is left goes while an operator still runs (it tears the orders down), then the operator.
    try {
      await users?.stop();
      if (world && !operator)
        operator = await start().catch((e: unknown) => (log(`clean-up: ${String(e)}`), undefined));
      if (set) await deleteOrders(set).catch((e: unknown) => log(`clean-up: ${String(e)}`));
      await watch?.stop();
      if (bw && bw !== world)
        await destroyWorld(bw, 10 * MINUTE).catch((e: unknown) => log(`clean-up: ${String(e)}`));
      await destroyWorld(world, 10 * MINUTE).catch((e: unknown) => log(`clean-up: ${String(e)}`));
    } finally {
      await operator?.stop();
      releaseOperatorLock();
    }
  }
}

const sec = (t: number) => `${(t / 1000).toFixed(1)} s`;
const pct = (v: number) => `${v >= 0 ? "+" : ""}${v.toFixed(1)} %`;
const lag = (l: { median: number; p99: number; max: number; min: number }) =>
  `median ${sec(l.median)}, p99 ${sec(l.p99)}, max ${sec(l.max)} (min ${sec(l.min)})`;

/** The phase's figures as one Markdown table: figure, value, what the design expects. */
export function formatSpread(r: SpreadReport): string {
  const n = r.config.orders;
  const w = r.config.windowMinutes;
  const hm = (text: string) => text.slice(11, 16);
  const clock = (text: string) => text.slice(11, 19);
  const s = r.started;
  const perMinute = (spread: MinuteSpread) => spread.perMinute.map((m) => m.count).join(" / ");
  const rows: [string, string, string][] = [
    [`${n} orders created (16 applies at a time)`, sec(r.createMs), "within a minute"],
    [
      "every first generation live (Ready, nextRotation shown)",
      `${sec(r.liveMs)} after the first apply; the last rotation due at ${clock(r.lastDue)}`,
      "",
    ],
    [
      `window: "${r.schedule}" UTC, ${w} min`,
      `${hm(r.windowStart)} to ${hm(r.windowEnd)} UTC, opened ${sec(r.lastDueBeforeWindowMs)} after the last rotation fell due`,
      "after every due",
    ],
    [
      "status.nextRotation before the window: per minute",
      `${perMinute(r.scheduled)}; largest deviation ${r.scheduled.largestDeviationPercent.toFixed(1)} % (${r.scheduled.largestDeviationSds.toFixed(2)} sd)`,
      `${r.scheduled.even.toFixed(0)} each ± ${r.scheduled.sd.toFixed(1)} (sd)`,
    ],
    [
      "status.nextRotation before the window: where",
      `${r.scheduled.inside} of ${n} inside, ${clock(r.scheduled.earliest)} to ${clock(r.scheduled.latest)}; at most ${r.scheduled.busiestSecond} in one second; ${r.scheduled.asComputed} as computed from uid and lastRotation`,
      `all inside, all as computed`,
    ],
    ["orders rotated before the window", String(r.rotatedBefore), "0"],
    ...s.perMinute.map((m, i): [string, string, string] => [
      `rotations started in minute ${i + 1} (${hm(m.start)})`,
      `${m.count} (${pct(m.deviationPercent)} of even)`,
      `${s.even.toFixed(0)} ± ${s.sd.toFixed(1)} (sd)`,
    ]),
    [
      "largest deviation from even, and the binomial sd",
      `${s.largestDeviationPercent.toFixed(1)} % (${s.largestDeviationSds.toFixed(2)} sd; sd ${s.sd.toFixed(1)} = ${((s.sd / s.even) * 100).toFixed(1)} % of even)`,
      "within 10 %",
    ],
    [
      "rotations started outside the window",
      `${s.before + s.after + r.laterOutside} (first ${s.before} before, ${s.after} after; later ${r.laterOutside})`,
      "0",
    ],
    [`orders not rotated by the window's end + ${AFTER_WINDOW_MS / 1000} s`, String(r.notStarted), "0"],
    [
      "orders slipped to the next window (generation 1, nextRotation after the window)",
      r.slipped.count === 0
        ? "0"
        : `${r.slipped.count}: moments ${clock(r.slipped.momentsEarliest ?? "")} to ${clock(r.slipped.momentsLatest ?? "")}, now due ${r.slipped.nextRotation ?? ""}`,
      "0",
    ],
    [
      `second rotations (due again inside the window; interval ${r.config.interval})`,
      `${r.laterInside} inside the window`,
      "0",
    ],
    ["nextRotation -> successor User created", lag(r.startLagMs), "a second or two"],
    ["successor User created -> switch (lastRotation)", lag(r.switchLagMs), "seconds"],
    ["busiest second of the starts", `${s.busiestSecond} rotations`, ""],
    ["machine CPU over the window", machineText(r.machine), ""],
    ["operator's API writes over the window, per order", r.apiWritesPerOrder.toFixed(1), ""],
  ];
  const header: [string, string, string] = ["figure", "value", "expected"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), `|${widths.map((x) => "-".repeat(x + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

/** The machine and its load at the end of the phase. */
export function spreadMachineLine(r: SpreadReport): string {
  const cpu = cpus();
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
  return (
    `backend ${r.config.backend}, broker ${brokerLabel(r.config.broker)}, --max-concurrent-reconciles=${r.config.workers}, ` +
    `grace ${r.config.gracePeriod}; node ${r.config.nodeFlags.join(" ")}; ${cpu.length} x ${cpu[0]?.model.trim() ?? "cpu"}, ` +
    `${mib(totalmem())} RAM (${mib(freemem())} free); load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")}; Node ${process.version}; run took ${sec(r.durationMs)}, ended ${new Date().toISOString()}`
  );
}
