// The scale phase's report as text: its figures as one Markdown table with the writes by what they
// write, the machine line under it, and the units the phase's progress lines share.
import { cpus, freemem, loadavg, totalmem } from "node:os";
import type { Counters } from "./backend.ts";
import { brokerLabel } from "./brokers.ts";
import type { MemoryReading, ScaleReport } from "./scale.ts";
import { machineText } from "./table.ts";
import { writesTable } from "./writes.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const sec = (t: number) => `${(t / 1000).toFixed(1)} s`;
export const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const thousands = (v: number) => Math.round(v).toLocaleString("en-US");

/** The requests of `c` scaled to an hour of `ms`, and per 1,000 orders of `n`. */
export function perHour(c: Counters, ms: number, n: number): string {
  const f = HOUR / ms / (n / 1000);
  return (
    `API ${thousands(c.apiWrites * f)} writes, ${thousands(c.apiReads * f)} reads; ` +
    `broker ${thousands(c.brokerWrites * f)} writes, ${thousands(c.brokerReads * f)} reads; ` +
    `OpenBao ${thousands(c.openBaoRequests * f)} requests`
  );
}

/** Reconciles of `c` per order, by controller (perItem leaves them, and the CPU, as counted). */
const passes = (c: Counters, n: number) =>
  Object.entries(c.reconciles)
    .filter(([, v]) => v / n >= 0.05)
    .map(([k, v]) => `${k} ${(v / n).toFixed(1)}`)
    .join(", ");

/** The phase's figures as one Markdown table: figure and value. */
export function formatScale(r: ScaleReport): string {
  const n = r.config.orders;
  const thousandsOfOrders = n / 1000;
  const memRow = (label: string, m: MemoryReading): [string, string] => [
    label,
    `${mib(m.rssBytes)} RSS, ${mib(m.heapUsedBytes)} JS heap`,
  ];
  const rot = r.rotation;
  const rows: [string, string][] = [
    [
      "orders per broker",
      r.config.brokers.map((b) => `${thousands(b.orders)} on ${brokerLabel(b)}`).join("; "),
    ],
    [
      `unrelated Secrets and ConfigMaps`,
      `${thousands(r.config.unrelated)} each, created in ${sec(r.unrelatedMs)}`,
    ],
    memRow("operator alone, among the unrelated objects", r.memory.idle),
    [`cold start: ${n} orders Ready`, `${sec(r.coldStart.ms)} (applied in ${sec(r.coldStart.applyMs)})`],
    ...r.config.brokers.map((b, i): [string, string] => [
      `cold start: the orders on ${brokerLabel(b)} Ready`,
      `${sec(r.coldStart.perBrokerMs[i] ?? NaN)} (${(b.orders / ((r.coldStart.perBrokerMs[i] ?? NaN) / 1000)).toFixed(1)} orders/s)`,
    ]),
    ["cold start: API writes per order", r.coldStart.perOrder.apiWrites.toFixed(1)],
    ["cold start: operator CPU per order", `${((r.coldStart.perOrder.cpuSeconds / n) * 1000).toFixed(1)} ms`],
    ["cold start: machine CPU", machineText(r.coldStart.machine)],
    memRow("operator after the cold start, settled", r.memory.cold),
    [
      "operator memory per 1,000 orders",
      `${mib((r.memory.cold.rssBytes - r.memory.idle.rssBytes) / thousandsOfOrders)} RSS, ${mib((r.memory.cold.heapUsedBytes - r.memory.idle.heapUsedBytes) / thousandsOfOrders)} JS heap`,
    ],
    ...r.config.brokers.map((b, i): [string, string] => {
      const m = r.brokerMemory[i] ?? { beforeBytes: NaN, afterBytes: NaN };
      return [
        `broker RSS: ${brokerLabel(b)}`,
        `${mib(m.beforeBytes)} before, ${mib(m.afterBytes)} after its ${thousands(b.orders)} orders: ${mib(((m.afterBytes - m.beforeBytes) / b.orders) * 1000)} per 1,000`,
      ];
    }),
    ["restart: every order and child seen again", sec(r.restart.ms)],
    [
      "restart: requests caused",
      `API ${r.restart.counters.apiWrites} writes, ${r.restart.counters.apiReads} reads; broker ${r.restart.counters.brokerWrites} writes, ${r.restart.counters.brokerReads} reads; OpenBao ${r.restart.counters.openBaoRequests}`,
    ],
    memRow("operator after the restart, settled", r.memory.restart),
    memRow(`the same, ${(r.config.memoryWaitMs / 1000).toFixed(0)} s later`, r.memory.later),
    [
      `steady state (${(r.steady.ms / MINUTE).toFixed(1)} min): per 1,000 orders per hour`,
      r.steady.ms > 0 ? perHour(r.steady.counters, r.steady.ms, n) : "not observed",
    ],
    [
      `rotation: window "${rot.schedule}" UTC, ${r.config.windowMinutes} min, interval ${r.config.interval}, grace ${r.config.gracePeriod}`,
      `${rot.windowStart.slice(11, 16)} to ${rot.windowEnd.slice(11, 16)} UTC`,
    ],
    [
      "rotation: the window set on every order",
      `${sec(rot.scheduleMs)}, ${rot.schedulePerOrder.apiWrites.toFixed(1)} API writes per order; ${rot.settledBeforeWindow ? "settled before the window opened" : "the window opened before its passes settled"}`,
    ],
    ["rotation: switches per minute of the window", rot.switches.perMinute.map((m) => m.count).join(" / ")],
    ["rotation: switches outside the window", `${rot.switches.before} before, ${rot.switches.after} after`],
    ["rotation: orders gone to the next window", String(rot.slipped)],
    ["rotation: window opened -> all switched", sec(rot.switchedMs)],
    ["rotation: window opened -> all swept", sec(rot.sweptMs)],
    ["rotation: API writes per order (sweep included)", rot.perOrder.apiWrites.toFixed(1)],
    ["rotation: passes per order", passes(rot.perOrder, n)],
    ["rotation: operator CPU per rotated order", `${((rot.perOrder.cpuSeconds / n) * 1000).toFixed(1)} ms`],
    ["rotation: machine CPU, window opened -> all switched", machineText(rot.machine)],
    [`teardown: ${n} orders gone`, sec(r.teardownMs)],
  ];
  const header: [string, string] = ["figure", "value"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  const table = [line(header), `|${widths.map((x) => "-".repeat(x + 2)).join("|")}|`, ...rows.map(line)];
  const writes = writesTable([
    { label: "cold start", counters: r.coldStart.perOrder },
    { label: "rotation over the window", counters: rot.perOrder },
  ]);
  return `${table.join("\n")}\n\nAPI writes per order by what they write:\n\n${writes}`;
}

/** The machine and its load at the end of the phase. */
export function scaleMachineLine(r: ScaleReport): string {
  const cpu = cpus();
  return (
    `backend ${r.config.backend}, --max-concurrent-reconciles=${r.config.workers}; node ${r.config.nodeFlags.join(" ")}; ` +
    `${cpu.length} x ${cpu[0]?.model.trim() ?? "cpu"}, ${mib(totalmem())} RAM (${mib(freemem())} free); ` +
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")}; Node ${process.version}; run took ${sec(r.durationMs)}, ended ${new Date().toISOString()}`
  );
}
