// The report as one Markdown table (figure, value, its floor from the same run, the ratio, the
// issue's target), and a line naming the machine and its load.
import { cpus, freemem, loadavg, totalmem } from "node:os";
import { operatorSettings } from "../../src/operator/settings.ts";
import { parseDuration } from "../../src/runtime/base/duration.ts";
import type { Counters } from "./backend.ts";
import { API_WRITES_PER_ORDER, type Floor } from "./floors.ts";
import type { LanesResult } from "./lanes.ts";
import type { MachineCpu } from "./machine.ts";
import type { BackendRun, BenchReport, TopologyResult, TopologyRun } from "./run.ts";
import type { ScaleRestartResult } from "./scale-restart.ts";

/** The operator's --topology-verification-period, which the benchmark leaves at its default. */
const VERIFICATION_PERIOD_MS =
  parseDuration(operatorSettings["topology-verification-period"].default ?? "") ?? NaN;

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
// NaN: not measured on this backend (upstream's operator counts no broker requests).
const num = (v: number) =>
  Number.isNaN(v) ? "n/a" : Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 2 : 1);
const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}x` : "-");

function floorText(f: Floor): string {
  const tried = f.tried.map((t) => `${t.concurrency}: ${s(t.ms)}`).join(", ");
  const sample = f.tried[0]?.items ?? 0;
  return `${s(f.ms)} at concurrency ${f.concurrency} (${sample} each at ${tried})`;
}

const requests = (c: Counters) =>
  `API ${num(c.apiWrites)} writes + ${num(c.apiReads)} reads; broker ${num(c.brokerWrites)} writes + ${num(c.brokerReads)} reads; OpenBao ${num(c.openBaoRequests)}`;

/** How busy the cores were and who kept them busy, the largest first. */
export function machineText(m: MachineCpu): string {
  const share = m.totalSeconds > 0 ? (m.busySeconds / m.totalSeconds) * 100 : 0;
  const who = Object.entries(m.byGroup)
    .filter(([, seconds]) => seconds >= 0.05)
    .sort(([, a], [, b]) => b - a)
    .map(([group, seconds]) => `${group} ${seconds.toFixed(1)}`)
    .join(", ");
  return `${share.toFixed(0)}% of ${m.cores} cores busy (${m.busySeconds.toFixed(1)} of ${m.totalSeconds.toFixed(1)} core-s): ${who}`;
}

/**
 * How long `writes` per order (the tenant's apply added) keep every core busy at the API server's and
 * etcd's CPU per write in the API floor's run: a floor of the phase on this machine, whatever the
 * operator does.
 */
function apiCpuRow(r: BenchReport, phase: string, what: string, writes: number, ms: number): Row {
  const n = r.config.orders;
  const m = r.apiFloor.machine;
  const perWrite = ((m.byGroup["API servers"] ?? 0) + (m.byGroup["etcd"] ?? 0)) / r.apiFloor.requests;
  const coreSeconds = perWrite * n * (writes + 1);
  return row(
    phase,
    `API server and etcd CPU of ${what} at the floor's cost per write, over ${m.cores} cores`,
    `${num(coreSeconds / m.cores)} s (${num(coreSeconds)} core-s: ${num(writes + 1)} writes per order at ${(perWrite * 1000).toFixed(2)} ms)`,
    "",
    ratio(ms, (coreSeconds / m.cores) * 1000),
  );
}

/**
 * The phase's CPU but the operator's and the benchmark's, over the cores: how long the phase would keep
 * the machine busy with the same requests from an operator that cost no CPU.
 */
function othersRow(phase: string, m: MachineCpu, ms: number): Row {
  const others = m.busySeconds - (m.byGroup["operator"] ?? 0) - (m.byGroup["benchmark"] ?? 0);
  return row(
    phase,
    `CPU of everything but the operator and the benchmark, over ${m.cores} cores`,
    `${num(others / m.cores)} s (${num(others)} core-s)`,
    "",
    ratio(ms, (others / m.cores) * 1000),
  );
}

/** One backend's row: its value and its ratio to the row's floor. */
interface Row {
  phase: string;
  figure: string;
  value: string;
  floor: string;
  ratio: string;
  target: string;
}

const row = (phase: string, figure: string, value: string, floor = "", ratio = "", target = ""): Row => ({
  phase,
  figure,
  value,
  floor,
  ratio,
  target,
});

/** One backend's rows; figures and floors are the same text for every backend, values and ratios differ. */
function rowsOf(r: BenchReport, brokerFloor: Floor, run: BackendRun): Row[] {
  const n = r.config.orders;
  const larger = brokerFloor.ms >= r.apiFloor.ms ? "broker" : "API";
  const largerMs = Math.max(brokerFloor.ms, r.apiFloor.ms);
  const hours = run.steady.ms / 3_600_000;
  const apiPerWrite = r.apiFloor.ms / API_WRITES_PER_ORDER / n;
  // The API server's floor rate, applied to the writes the operator really made.
  const apiAtOperatorWrites = apiPerWrite * n * run.coldStart.perOrder.apiWrites;
  const apiAtRotationWrites = apiPerWrite * n * run.rotation.perOrder.apiWrites;
  const perHour = (v: number) => num(v / n / hours);
  const st = run.steady.counters;
  const bestSweep = run.sweep.reduce<(typeof run.sweep)[number] | undefined>(
    (a, b) => (!a || b.ms < a.ms ? b : a),
    undefined,
  );
  const controllers = [...new Set(run.sweep.flatMap((p) => Object.keys(p.queueWaitSeconds)))].sort();
  const bestPerController = controllers
    .map((c) => {
      const best = run.sweep.reduce((a, b) =>
        (b.queueWaitSeconds[c] ?? 0) < (a.queueWaitSeconds[c] ?? 0) ? b : a,
      );
      return `${c} ${best.workers}`;
    })
    .join(", ");
  return [
    row("floor", `broker: ${n} vhosts + users + permissions`, floorText(brokerFloor)),
    row("floor", `API server: ${n} x ${API_WRITES_PER_ORDER} writes`, floorText(r.apiFloor)),
    row("floor", "machine CPU of the broker's floor (s by process)", machineText(brokerFloor.machine)),
    row("floor", "machine CPU of the API server's floor (s by process)", machineText(r.apiFloor.machine)),
    row(
      "cold start",
      `${n} orders Ready (delivered, backed up)`,
      `${s(run.coldStart.ms)}, ${num((n / run.coldStart.ms) * 1000)} orders/s`,
      `${s(largerMs)} (${larger})`,
      ratio(run.coldStart.ms, largerMs),
      "<= 1.25x",
    ),
    row(
      "cold start",
      "requests per order",
      requests(run.coldStart.perOrder),
      `API ${API_WRITES_PER_ORDER} writes; broker 3 writes`,
    ),
    row(
      "cold start",
      "API floor at the operator's writes per order",
      `${s(apiAtOperatorWrites)} at ${num(run.coldStart.perOrder.apiWrites)} writes`,
      "",
      ratio(run.coldStart.ms, apiAtOperatorWrites),
    ),
    row(
      "cold start",
      "Lease transitions of the two replicas (15 s / 10 s / 2 s)",
      String(run.coldStart.perOrder.leaseTransitions),
      "",
      "",
      "0",
    ),
    row("cold start", "operator CPU over the phase", `${num(run.coldStart.perOrder.cpuSeconds)} s`),
    row("cold start", "machine CPU over the phase (s by process)", machineText(run.coldStart.machine)),
    apiCpuRow(r, "cold start", "its writes", run.coldStart.perOrder.apiWrites, run.coldStart.ms),
    othersRow("cold start", run.coldStart.machine, run.coldStart.ms),
    row("restart", `every order seen again`, s(run.restart.ms)),
    row(
      "restart",
      "broker writes / API writes caused",
      `${num(run.restart.counters.brokerWrites)} / ${num(run.restart.counters.apiWrites)}`,
      "",
      "",
      "0 / 0",
    ),
    row("restart", "requests caused", requests(run.restart.counters)),
    row("restart", "operator RSS", mib(run.restart.counters.rssBytes)),
    row("rotation", `passwordGeneration raised on ${n} orders (tenant's applies)`, s(run.rotation.applyMs)),
    row("rotation", "due -> all switched and delivered", s(run.rotation.switchedMs), "", "", "<= 30 s"),
    row("rotation", `due -> all swept (grace ${r.config.gracePeriod})`, s(run.rotation.sweptMs)),
    row("rotation", "machine CPU, due -> all switched (s by process)", machineText(run.rotation.machine)),
    apiCpuRow(r, "rotation", "the switch's writes", run.rotation.toSwitch.apiWrites, run.rotation.switchedMs),
    othersRow("rotation", run.rotation.machine, run.rotation.switchedMs),
    row(
      "rotation",
      "API floor at the rotation's writes per order (sweep included)",
      `${s(apiAtRotationWrites)} at ${num(run.rotation.perOrder.apiWrites)} writes`,
      "",
      ratio(run.rotation.sweptMs, apiAtRotationWrites),
    ),
    row("rotation", "requests per order", requests(run.rotation.perOrder)),
    row(
      "rotation",
      "Lease transitions of the two replicas, due -> all swept",
      String(run.rotation.perOrder.leaseTransitions),
      "",
      "",
      "0",
    ),
    row("steady state", `observed`, `${num(run.steady.ms / 60_000)} min`),
    row("steady state", "API reads per order per hour", perHour(st.apiReads), "", "", "drift checks only"),
    row("steady state", "API writes per order per hour", perHour(st.apiWrites), "", "", "0"),
    row(
      "steady state",
      "the leader's Lease requests per minute (renewals; not in the rows above)",
      num(st.leaseRequests / (run.steady.ms / 60_000)),
    ),
    row(
      "steady state",
      "broker requests per order per hour (writes)",
      `${perHour(st.brokerReads + st.brokerWrites)} (${perHour(st.brokerWrites)})`,
      "",
      "",
      "0 writes",
    ),
    row(
      "steady state",
      `broker requests per verification period (${num(VERIFICATION_PERIOD_MS / 60_000)} min)`,
      num(((st.brokerReads + st.brokerWrites) * VERIFICATION_PERIOD_MS) / run.steady.ms),
      "",
      "",
      "<= 50 at 1,000 orders",
    ),
    row(
      "steady state",
      "OpenBao requests per order per hour (writes)",
      `${perHour(st.openBaoRequests)} (${perHour(st.openBaoWrites)})`,
      "",
      "",
      "0 writes",
    ),
    row("memory", "RSS of the operator alone, before any order", mib(run.memory.idleBytes)),
    row("memory", `RSS with ${n} orders, after the cold start`, mib(run.memory.withOrdersBytes)),
    row(
      "memory",
      `RSS with ${n} orders, ${r.config.unrelated} unrelated Secrets and ${r.config.unrelated} ConfigMaps`,
      `${mib(run.memory.withUnrelatedBytes)} (JS heap ${mib(run.memory.heapWithUnrelatedBytes)})`,
    ),
    row(
      "memory",
      "the same, a minute after the restart's passes",
      `${mib(run.memory.laterWithUnrelatedBytes)} (JS heap ${mib(run.memory.heapLaterWithUnrelatedBytes)})`,
      "",
      "",
      "<= 150 MiB",
    ),
    ...topologyRows(r, run.topology),
    row("teardown", `${n} orders deleted and gone`, s(run.teardownMs)),
    ...(run.lanes ? laneRows(run.lanes) : []),
    ...(run.scale ? scaleRows(run.scale) : []),
    row(
      "workers",
      `cold start of ${r.config.sweepOrders} orders per --max-concurrent-reconciles`,
      run.sweep.map((p) => `${p.workers}: ${s(p.ms)}`).join(", ") || "not run",
      "",
      "",
      bestSweep ? `best ${bestSweep.workers}` : "",
    ),
    row("workers", "best per controller (least queue wait)", bestPerController || "not run"),
  ];
}

/** The topology-alone rows: the time against the broker's floor, the requests, the API server's floor. */
function topologyRows(r: BenchReport, topo: TopologyResult): Row[] {
  const n = r.config.orders;
  const topoFloorRate = (topo.objects / r.topologyFloor.ms) * 1000;
  // The API server's floor rate, applied to the operator's writes per object and the tenant's apply.
  const topologyApiMs =
    (r.apiFloor.ms / API_WRITES_PER_ORDER / n) * topo.objects * (topo.perObject.apiWrites + 1);
  const topoRate = (topo.objects / topo.ms) * 1000;
  return [
    row(
      "topology",
      `${n} Queues + Exchanges + Bindings under one vhost`,
      `${s(topo.ms)}, ${num(topoRate)} objects/s`,
      `${floorText(r.topologyFloor)}, ${num(topoFloorRate)} objects/s`,
      ratio(topo.ms, r.topologyFloor.ms),
    ),
    row("topology", "requests per object", requests(topo.perObject)),
    row(
      "topology",
      "API floor at the operator's writes per object, plus the apply",
      `${s(topologyApiMs)} at ${num(topo.perObject.apiWrites)} writes`,
      "",
      ratio(topo.ms, topologyApiMs),
    ),
    row("topology", "operator CPU until all Ready", `${num(topo.perObject.cpuSeconds)} s`),
    row("topology", "the benchmark's applies of the 3N objects alone", s(topo.applyMs)),
  ];
}

/** The restart among many topology objects: what the new leader did until it had seen every one. */
function scaleRows(scale: ScaleRestartResult): Row[] {
  const c = scale.restart;
  return [
    row(
      "restart at scale",
      `${scale.objects} Queues + Exchanges + Bindings applied -> all Ready`,
      s(scale.readyMs),
    ),
    row("restart at scale", "restart -> every object seen again", s(scale.restartMs), "", "", "< 60 s"),
    row(
      "restart at scale",
      "broker writes / API writes caused",
      `${num(c.brokerWrites)} / ${num(c.apiWrites)}`,
      "",
      "",
      "0 / 0",
    ),
    row("restart at scale", "requests caused", requests(c)),
    row("restart at scale", "operator RSS", mib(c.rssBytes), "", "", "< 250 MiB"),
  ];
}

/** The lane-per-broker rows: each time, the ratio to the one it is held to, and the machine's CPU. */
function laneRows(l: LanesResult): Row[] {
  return [
    row("lanes", `${l.orders} orders Ready on one broker`, s(l.oneBrokerMs)),
    row(
      "lanes",
      `${2 * l.orders} orders Ready on two brokers, ${l.orders} each (to ${l.orders} on one)`,
      s(l.twoBrokersMs),
      s(l.oneBrokerMs),
      ratio(l.twoBrokersMs, l.oneBrokerMs),
      "<= 1.2x",
    ),
    row(
      "lanes",
      `the second broker's ${l.orders} orders back after it restarted empty (checked every 15 s)`,
      s(l.emptiedRecoveryMs),
      "",
      "",
      "< 30 s",
    ),
    row("lanes", `machine CPU, ${l.orders} on one broker (s by process)`, machineText(l.oneBrokerMachine)),
    row("lanes", `machine CPU, ${2 * l.orders} on two (s by process)`, machineText(l.twoBrokersMachine)),
    row("lanes", `${l.orders} orders of a healthy broker Ready alone`, s(l.aloneMs)),
    row(
      "lanes",
      `the same beside ${l.hungOrders} orders of a hung broker (to alone)`,
      s(l.besideHungMs),
      s(l.aloneMs),
      ratio(l.besideHungMs, l.aloneMs),
      "<= 1.5x",
    ),
  ];
}

/** `phases: topology`: the API server's floor and the topology rows. */
function topologyOnlyRows(r: BenchReport, run: TopologyRun): Row[] {
  return [
    row("floor", `API server: ${r.config.orders} x ${API_WRITES_PER_ORDER} writes`, floorText(r.apiFloor)),
    ...topologyRows(r, run.topology),
  ];
}

/**
 * The report as one Markdown table. With one backend: phase, figure, value, floor, ratio, target. With
 * several, a value and a ratio column per backend, side by side.
 */
export function formatTable(r: BenchReport): string {
  const perRun = r.runs.map((run) =>
    "coldStart" in run && r.brokerFloor ? rowsOf(r, r.brokerFloor, run) : topologyOnlyRows(r, run),
  );
  const first = perRun[0] ?? [];
  const several = r.runs.length > 1;
  const header = several
    ? [
        "phase",
        "figure",
        ...r.runs.map((run) => run.backend),
        "floor (same run)",
        ...r.runs.map((run) => `ratio ${run.backend}`),
        "target",
      ]
    : ["phase", "figure", "value", "floor (same run)", "ratio", "target"];
  const body = first.map((base, i) => [
    base.phase,
    base.figure,
    ...perRun.map((rows) => rows[i]?.value ?? ""),
    base.floor,
    ...perRun.map((rows) => rows[i]?.ratio ?? ""),
    base.target,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i]?.length ?? 0)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body.map(line)].join("\n");
}

/** With several backends: how many times faster the first is than each other, on the loads compared. */
export function comparisonLines(r: BenchReport): string[] {
  const [first, ...others] = r.runs;
  if (!first) return [];
  return others.map((other) => {
    // How many times as fast the first is, from the two durations of the same load.
    const times = (firstMs: number, otherMs: number) => `${(otherMs / firstMs).toFixed(2)}x`;
    const topology = `${first.backend} against ${other.backend}: topology alone ${times(first.topology.ms, other.topology.ms)} the objects/s`;
    if (!("coldStart" in first && "coldStart" in other)) return topology;
    return (
      `${topology}; ` +
      `cold start ${times(first.coldStart.ms, other.coldStart.ms)} as fast; ` +
      `rotation switched ${times(first.rotation.switchedMs, other.rotation.switchedMs)} as fast; ` +
      `restart ${times(first.restart.ms, other.restart.ms)} as fast`
    );
  });
}

/** The machine and its load at the end of the run. */
export function machineLine(report: BenchReport): string {
  const cpu = cpus();
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");
  return (
    `backend ${report.config.backends.join(" and ")}, --max-concurrent-reconciles=${report.config.workers} ` +
    `(the order controller and the Vhosts keep their own settings); node ${report.config.nodeFlags.join(" ")}; ` +
    `${cpu.length} x ${cpu[0]?.model.trim() ?? "cpu"}, ${mib(totalmem())} RAM (${mib(freemem())} free); ` +
    `load average ${load}; Node ${process.version}; run took ${s(report.durationMs)}, ended ${new Date().toISOString()}`
  );
}
