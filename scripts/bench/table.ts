// The report as one Markdown table (figure, value, its floor from the same run, the ratio, the
// issue's target), and a line naming the machine and its load.
import { cpus, freemem, loadavg, totalmem } from "node:os";
import type { Counters } from "./backend.ts";
import { API_WRITES_PER_ORDER, type Floor } from "./floors.ts";
import type { BenchReport } from "./run.ts";
import type { TopologyReport } from "./topology.ts";

type Row = [phase: string, figure: string, value: string, floor: string, ratio: string, target: string];

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

export function formatTable(r: BenchReport): string {
  const n = r.config.orders;
  const larger = r.brokerFloor.ms >= r.apiFloor.ms ? "broker" : "API";
  const largerMs = Math.max(r.brokerFloor.ms, r.apiFloor.ms);
  const hours = r.steady.ms / 3_600_000;
  // The API server's floor rate, applied to the writes the operator really made.
  const apiAtOperatorWrites = (r.apiFloor.ms / API_WRITES_PER_ORDER) * r.coldStart.perOrder.apiWrites;
  const perHour = (v: number) => num(v / n / hours);
  const st = r.steady.counters;
  const bestSweep = r.sweep.reduce<(typeof r.sweep)[number] | undefined>(
    (a, b) => (!a || b.ms < a.ms ? b : a),
    undefined,
  );
  const controllers = [...new Set(r.sweep.flatMap((p) => Object.keys(p.queueWaitSeconds)))].sort();
  const bestPerController = controllers
    .map((c) => {
      const best = r.sweep.reduce((a, b) =>
        (b.queueWaitSeconds[c] ?? 0) < (a.queueWaitSeconds[c] ?? 0) ? b : a,
      );
      return `${c} ${best.workers}`;
    })
    .join(", ");
  const rows: Row[] = [
    ["floor", `broker: ${n} vhosts + users + permissions`, floorText(r.brokerFloor), "", "", ""],
    ["floor", `API server: ${n} x ${API_WRITES_PER_ORDER} writes`, floorText(r.apiFloor), "", "", ""],
    [
      "cold start",
      `${n} orders Ready (delivered, backed up)`,
      `${s(r.coldStart.ms)}, ${num((n / r.coldStart.ms) * 1000)} orders/s`,
      `${s(largerMs)} (${larger})`,
      ratio(r.coldStart.ms, largerMs),
      "<= 1.25x",
    ],
    [
      "cold start",
      "requests per order",
      requests(r.coldStart.perOrder),
      `API ${API_WRITES_PER_ORDER} writes; broker 3 writes`,
      "",
      "",
    ],
    [
      "cold start",
      `API floor at the operator's ${num(r.coldStart.perOrder.apiWrites)} writes per order`,
      s(apiAtOperatorWrites),
      "",
      ratio(r.coldStart.ms, apiAtOperatorWrites),
      "",
    ],
    ["cold start", "operator CPU over the phase", `${num(r.coldStart.perOrder.cpuSeconds)} s`, "", "", ""],
    ["restart", `every order seen again`, s(r.restart.ms), "", "", ""],
    [
      "restart",
      "broker writes / API writes caused",
      `${num(r.restart.counters.brokerWrites)} / ${num(r.restart.counters.apiWrites)}`,
      "",
      "",
      "0 / 0",
    ],
    ["restart", "requests caused", requests(r.restart.counters), "", "", ""],
    ["restart", "operator RSS", mib(r.restart.counters.rssBytes), "", "", ""],
    [
      "rotation",
      `passwordGeneration raised on ${n} orders (tenant's applies)`,
      s(r.rotation.applyMs),
      "",
      "",
      "",
    ],
    ["rotation", "due -> all switched and delivered", s(r.rotation.switchedMs), "", "", "<= 30 s"],
    ["rotation", `due -> all swept (grace ${r.config.gracePeriod})`, s(r.rotation.sweptMs), "", "", ""],
    [
      "rotation",
      `API floor at the rotation's ${num(r.rotation.perOrder.apiWrites)} writes per order (sweep included)`,
      s((r.apiFloor.ms / API_WRITES_PER_ORDER) * r.rotation.perOrder.apiWrites),
      "",
      ratio(r.rotation.sweptMs, (r.apiFloor.ms / API_WRITES_PER_ORDER) * r.rotation.perOrder.apiWrites),
      "",
    ],
    ["rotation", "requests per order", requests(r.rotation.perOrder), "", "", ""],
    ["steady state", `observed`, `${num(r.steady.ms / 60_000)} min`, "", "", ""],
    ["steady state", "API reads per order per hour", perHour(st.apiReads), "", "", "drift checks only"],
    ["steady state", "API writes per order per hour", perHour(st.apiWrites), "", "", "0"],
    [
      "steady state",
      "broker requests per order per hour (writes)",
      `${perHour(st.brokerReads + st.brokerWrites)} (${perHour(st.brokerWrites)})`,
      "",
      "",
      "0 writes",
    ],
    [
      "steady state",
      "OpenBao requests per order per hour (writes)",
      `${perHour(st.openBaoRequests)} (${perHour(st.openBaoWrites)})`,
      "",
      "",
      "0 writes",
    ],
    ["memory", "RSS of the operator alone, before any order", mib(r.memory.idleBytes), "", "", ""],
    ["memory", `RSS with ${n} orders, after the cold start`, mib(r.memory.withOrdersBytes), "", "", ""],
    [
      "memory",
      `RSS with ${n} orders, ${r.config.unrelated} unrelated Secrets and ${r.config.unrelated} ConfigMaps`,
      `${mib(r.memory.withUnrelatedBytes)} (JS heap ${mib(r.memory.heapWithUnrelatedBytes)})`,
      "",
      "",
      "<= 150 MiB",
    ],
    ...topologyRows(r),
    ["teardown", `${n} orders deleted and gone`, s(r.teardownMs), "", "", ""],
    [
      "workers",
      `cold start of ${r.config.sweepOrders} orders per --max-concurrent-reconciles`,
      r.sweep.map((p) => `${p.workers}: ${s(p.ms)}`).join(", ") || "not run",
      "",
      "",
      bestSweep ? `best ${bestSweep.workers}` : "",
    ],
    ["workers", "best per controller (least queue wait)", bestPerController || "not run", "", "", ""],
  ];
  return markdown(rows);
}

/** The topology-alone rows: the time against the broker's floor, the requests, the API server's floor. */
function topologyRows(r: Pick<BenchReport, "config" | "apiFloor" | "topology">): Row[] {
  const n = r.config.orders;
  const topoFloorRate = (r.topology.objects / r.topology.floor.ms) * 1000;
  // The API server's floor rate, applied to the operator's writes per object and the tenant's apply.
  const topologyApiMs =
    (r.apiFloor.ms / API_WRITES_PER_ORDER / n) * r.topology.objects * (r.topology.perObject.apiWrites + 1);
  const topoRate = (r.topology.objects / r.topology.ms) * 1000;
  return [
    [
      "topology",
      `${n} Queues + Exchanges + Bindings under one vhost`,
      `${s(r.topology.ms)}, ${num(topoRate)} objects/s`,
      `${floorText(r.topology.floor)}, ${num(topoFloorRate)} objects/s`,
      ratio(r.topology.ms, r.topology.floor.ms),
      "",
    ],
    ["topology", "requests per object", requests(r.topology.perObject), "", "", ""],
    [
      "topology",
      `API floor at the operator's ${num(r.topology.perObject.apiWrites)} writes per object, plus the apply`,
      s(topologyApiMs),
      "",
      ratio(r.topology.ms, topologyApiMs),
      "",
    ],
    ["topology", "operator CPU over the phase", `${num(r.topology.perObject.cpuSeconds)} s`, "", "", ""],
  ];
}

/** `--phases=topology`: the API server's floor and the topology rows. */
export function formatTopologyTable(r: TopologyReport): string {
  return markdown([
    [
      "floor",
      `API server: ${r.config.orders} x ${API_WRITES_PER_ORDER} writes`,
      floorText(r.apiFloor),
      "",
      "",
      "",
    ],
    ...topologyRows(r),
    ["topology", "the benchmark's applies of the 3N objects alone", s(r.topology.applyMs), "", "", ""],
  ]);
}

function markdown(rows: Row[]): string {
  const header: Row = ["phase", "figure", "value", "floor (same run)", "ratio", "target"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (row: Row) => `| ${row.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

/** The machine and its load at the end of the run. */
export function machineLine(report: Pick<BenchReport, "config" | "durationMs">): string {
  const cpu = cpus();
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");
  return (
    `backend ${report.config.backend}, ${report.config.workers} worker(s) per controller; ` +
    `${cpu.length} x ${cpu[0]?.model.trim() ?? "cpu"}, ${mib(totalmem())} RAM (${mib(freemem())} free); ` +
    `load average ${load}; Node ${process.version}; run took ${s(report.durationMs)}, ended ${new Date().toISOString()}`
  );
}
