// The report as one Markdown table (figure, value, its floor from the same run, the ratio, the
// issue's target), and a line naming the machine and its load.
import { cpus, freemem, loadavg, totalmem } from "node:os";
import { operatorSettings } from "../../src/operator/settings.ts";
import { parseDuration } from "../../src/runtime/base/duration.ts";
import type { Counters } from "./backend.ts";
import { brokerLabel, type BrokerInfo } from "./brokers.ts";
import { API_WRITES_PER_ORDER, type BrokerFloor, type Floor, type VhostGrowth } from "./floors.ts";
import type { LanesResult } from "./lanes.ts";
import type { MachineCpu } from "./machine.ts";
import type { BackendRun, BenchReport, BrokerFloors, TopologyResult, TopologyRun } from "./run.ts";
import type { ScaleRestartResult } from "./scale-restart.ts";

/** The operator's --topology-verification-period, which the benchmark leaves at its default. */
const VERIFICATION_PERIOD_MS =
  parseDuration(operatorSettings["topology-verification-period"].default ?? "") ?? NaN;

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
/** For figures of a second or less. */
const s2 = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
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

/** How the cost of a vhost grew from a broker holding few to one holding the floor's N. */
export function growthText(g: VhostGrowth): string {
  const each = (ms: number) => `${(ms / g.items).toFixed(0)} ms`;
  return (
    `${s(g.emptyMs)} holding ${g.emptyHeld} vhosts -> ${s(g.heldMs)} holding ${g.held}; ` +
    `${each(g.emptyMs)} -> ${each(g.heldMs)} each`
  );
}

const requests = (c: Counters) =>
  `API ${num(c.apiWrites)} writes + ${num(c.apiReads)} reads; broker ${num(c.brokerWrites)} writes + ${num(c.brokerReads)} reads; OpenBao ${num(c.openBaoRequests)}`;

/** The passes of each controller that ran, and the operator's CPU, per order. */
function passesText(c: Counters, n: number): string {
  const passes = Object.entries(c.reconciles)
    .filter(([, count]) => count > 0)
    .sort(([, a], [, b]) => b - a)
    .map(([controller, count]) => `${controller} ${num(count / n)}`)
    .join(", ");
  return `${passes}; ${((c.cpuSeconds / n) * 1000).toFixed(1)} ms CPU`;
}

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

/**
 * The brokers of a report (one per broker of `--brokers`; a report from before the flag has only its top
 * level floors, of the broker every test used then).
 */
function brokersOf(r: BenchReport): BrokerFloors[] {
  if (r.brokers?.length) return r.brokers;
  return [
    {
      part: "rabbitmq",
      version: "unknown",
      ...(r.brokerFloor && { brokerFloor: r.brokerFloor }),
      topologyFloor: r.topologyFloor,
    },
  ];
}

/** The floors of the run's broker. */
function floorsOf(r: BenchReport, run: { broker?: BrokerInfo }): BrokerFloors {
  const all = brokersOf(r);
  return all.find((b) => b.part === run.broker?.part) ?? all[0]!;
}

/** Whether the report measured several brokers: then each column names its broker. */
const severalBrokers = (r: BenchReport) => brokersOf(r).length > 1;

/** How a column names a run: its backend, its broker, or both. */
export function runLabel(r: BenchReport, run: { backend: string; broker?: BrokerInfo }): string {
  if (!severalBrokers(r)) return run.backend;
  const broker = brokerLabel(run.broker ?? floorsOf(r, run));
  return r.config.backends.length > 1 ? `${run.backend}, ${broker}` : broker;
}

/** "broker" in the floor rows; with one broker, its version too (with several, the columns name them). */
const brokerName = (r: BenchReport) =>
  severalBrokers(r) ? "broker" : `broker ${brokerLabel(brokersOf(r)[0]!)}`;

/**
 * The broker's floor rows: its N vhosts, users and permissions, and the growth of their cost with the
 * vhosts it holds (absent in reports from before it was measured).
 */
function brokerFloorRows(r: BenchReport, f: BrokerFloor): Row[] {
  const n = r.config.orders;
  const rows = [row("floor", `${brokerName(r)}: ${n} vhosts + users + permissions`, floorText(f))];
  const g = f.growth as VhostGrowth | undefined;
  if (g)
    rows.push(
      row(
        "floor",
        `broker: ${g.items} more at concurrency ${g.concurrency}, holding few vhosts -> holding the floor's ${n}`,
        growthText(g),
        "",
        ratio(g.heldMs, g.emptyMs),
        "1x: linear",
      ),
    );
  return rows;
}

/** One backend's rows; figures are the same text for every run, values, floors and ratios differ. */
function rowsOf(r: BenchReport, floors: BrokerFloors, run: BackendRun): Row[] {
  const n = r.config.orders;
  const brokerFloor = floors.brokerFloor!;
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
    ...brokerFloorRows(r, brokerFloor),
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
      "passes and operator CPU per rotated order, due -> all swept",
      passesText(run.rotation.perOrder, n),
      "",
      "",
      "<= 15 ms",
    ),
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
    ...(run.memory ? memoryRows(r, run.memory) : []),
    ...topologyRows(r, floors.topologyFloor, run.topology),
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

/** The memory rows of a run that measured them (the first broker's). */
function memoryRows(r: BenchReport, m: NonNullable<BackendRun["memory"]>): Row[] {
  const n = r.config.orders;
  return [
    row("memory", "RSS of the operator alone, before any order", mib(m.idleBytes)),
    row("memory", `RSS with ${n} orders, after the cold start`, mib(m.withOrdersBytes)),
    row(
      "memory",
      `RSS with ${n} orders, ${r.config.unrelated} unrelated Secrets and ${r.config.unrelated} ConfigMaps`,
      `${mib(m.withUnrelatedBytes)} (JS heap ${mib(m.heapWithUnrelatedBytes)})`,
    ),
    row(
      "memory",
      "the same, a minute after the restart's passes",
      `${mib(m.laterWithUnrelatedBytes)} (JS heap ${mib(m.heapLaterWithUnrelatedBytes)})`,
      "",
      "",
      "<= 150 MiB",
    ),
  ];
}

/** The topology-alone rows: the time against the broker's floor, the requests, the API server's floor. */
function topologyRows(r: BenchReport, topologyFloor: Floor, topo: TopologyResult): Row[] {
  const n = r.config.orders;
  const topoFloorRate = (topo.objects / topologyFloor.ms) * 1000;
  // The API server's floor rate, applied to the operator's writes per object and the tenant's apply.
  const topologyApiMs =
    (r.apiFloor.ms / API_WRITES_PER_ORDER / n) * topo.objects * (topo.perObject.apiWrites + 1);
  const topoRate = (topo.objects / topo.ms) * 1000;
  return [
    row(
      "topology",
      `${n} Queues + Exchanges + Bindings under one vhost`,
      `${s(topo.ms)}, ${num(topoRate)} objects/s`,
      `${floorText(topologyFloor)}, ${num(topoFloorRate)} objects/s`,
      ratio(topo.ms, topologyFloor.ms),
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
      "restart again, an order created as it starts -> Ready (against one on the settled operator); medians",
      s2(scale.orderDuringRestartMs),
      s2(scale.orderIdleMs),
      ratio(scale.orderDuringRestartMs, scale.orderIdleMs),
      "<= 2x",
    ),
    row(
      "restart at scale",
      "that restart -> every object seen again (against the restart without it)",
      s(scale.restartWithOrderMs),
      s(scale.restartMs),
      ratio(scale.restartWithOrderMs, scale.restartMs),
    ),
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
    ...topologyRows(r, floorsOf(r, run).topologyFloor, run.topology),
  ];
}

/** A row's place in every run: its phase and figure. */
const keyOf = (row: Row) => `${row.phase}\u0000${row.figure}`;

/**
 * Every run's rows, aligned: each key once, in the order the runs list them (a row only some runs have,
 * such as the memory rows of the first broker's, after the row before it), with each run's row or none.
 */
export function alignRows(perRun: Row[][]): { base: Row; cells: (Row | undefined)[] }[] {
  const order: string[] = [];
  const bases = new Map<string, Row>();
  for (const rows of perRun) {
    let after = -1;
    for (const row of rows) {
      const key = keyOf(row);
      const at = order.indexOf(key);
      if (at >= 0) {
        after = at;
        continue;
      }
      order.splice(after + 1, 0, key);
      bases.set(key, row);
      after += 1;
    }
  }
  const byRun = perRun.map((rows) => new Map(rows.map((row) => [keyOf(row), row])));
  return order.map((key) => ({ base: bases.get(key)!, cells: byRun.map((rows) => rows.get(key)) }));
}

/**
 * The report as one Markdown table. With one run: phase, figure, value, floor, ratio, target. With
 * several, a value and a ratio column per run (backend, or broker with its version), side by side; with
 * several brokers, a floor column per run too, as each broker has its own floors.
 */
export function formatTable(r: BenchReport): string {
  const perRun = r.runs.map((run) =>
    "coldStart" in run && floorsOf(r, run).brokerFloor
      ? rowsOf(r, floorsOf(r, run), run)
      : topologyOnlyRows(r, run),
  );
  const aligned = alignRows(perRun);
  const several = r.runs.length > 1;
  const floorPerRun = several && severalBrokers(r);
  const labels = r.runs.map((run) => runLabel(r, run));
  const header = several
    ? [
        "phase",
        "figure",
        ...labels,
        ...(floorPerRun ? labels.map((l) => `floor ${l}`) : ["floor (same run)"]),
        ...labels.map((l) => `ratio ${l}`),
        "target",
      ]
    : ["phase", "figure", "value", "floor (same run)", "ratio", "target"];
  const body = aligned.map(({ base, cells }) => [
    base.phase,
    base.figure,
    ...cells.map((c) => c?.value ?? "not run"),
    ...(floorPerRun ? cells.map((c) => c?.floor ?? "") : [base.floor]),
    ...cells.map((c) => c?.ratio ?? ""),
    base.target,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i]?.length ?? 0)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body.map(line)].join("\n");
}

/** With several runs: how many times faster the first is than each other, on the loads compared. */
export function comparisonLines(r: BenchReport): string[] {
  const [first, ...others] = r.runs;
  if (!first) return [];
  const lines = others.map((other) => {
    // How many times as fast the first is, from the two durations of the same load.
    const times = (firstMs: number, otherMs: number) => `${(otherMs / firstMs).toFixed(2)}x`;
    const topology = `${runLabel(r, first)} against ${runLabel(r, other)}: topology alone ${times(first.topology.ms, other.topology.ms)} the objects/s`;
    if (!("coldStart" in first && "coldStart" in other)) return topology;
    return (
      `${topology}; ` +
      `cold start ${times(first.coldStart.ms, other.coldStart.ms)} as fast; ` +
      `rotation switched ${times(first.rotation.switchedMs, other.rotation.switchedMs)} as fast; ` +
      `restart ${times(first.restart.ms, other.restart.ms)} as fast`
    );
  });
  // The brokers' own floors, against the first's.
  const [firstBroker, ...otherBrokers] = brokersOf(r);
  for (const other of otherBrokers) {
    const a = firstBroker?.brokerFloor;
    const b = other.brokerFloor;
    if (!firstBroker || !a?.growth || !b?.growth) continue;
    lines.push(
      `${brokerLabel(firstBroker)} against ${brokerLabel(other)}: broker floor ${(b.ms / a.ms).toFixed(2)}x as fast; ` +
        `a vhost's cost holding ${r.config.orders} to holding few ${ratio(a.growth.heldMs, a.growth.emptyMs)} against ${ratio(b.growth.heldMs, b.growth.emptyMs)}`,
    );
  }
  return lines;
}

/** The machine and its load at the end of the run. */
export function machineLine(report: BenchReport): string {
  const cpu = cpus();
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");
  return (
    `backend ${report.config.backends.join(" and ")}, broker ${brokersOf(report).map(brokerLabel).join(" and ")}, --max-concurrent-reconciles=${report.config.workers} ` +
    `(the order controller and the Vhosts keep their own settings); node ${report.config.nodeFlags.join(" ")}; ` +
    `${cpu.length} x ${cpu[0]?.model.trim() ?? "cpu"}, ${mib(totalmem())} RAM (${mib(freemem())} free); ` +
    `load average ${load}; Node ${process.version}; run took ${s(report.durationMs)}, ended ${new Date().toISOString()}`
  );
}
