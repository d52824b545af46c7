// A benchmark report as SVG plots, hand-written text with no dependency: the phases' durations per
// backend, the workers sweep, the operator's memory against its orders, and the requests per order of
// each phase. `npm run bench -- --plots DIR` writes them after a run; `node harness/bench/plots.ts
// REPORT.json DIR` writes them from a report saved with `--json` (docs/performance.md's plots come from
// docs/performance/latest-run.json that way).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The requests of a phase, per order or object (NaN or null: not counted on that backend). */
interface Requests {
  apiWrites: number | null;
  apiReads: number | null;
  brokerWrites: number | null;
  brokerReads: number | null;
  openBaoRequests: number | null;
}

/** One backend's run as the plots read it; a run of `--phases=topology` has its topology load only. */
export interface PlotRun {
  backend: string;
  coldStart?: { ms: number; perOrder: Requests };
  restart?: { ms: number; counters: Requests };
  rotation?: { switchedMs: number; sweptMs: number; perOrder: Requests };
  memory?: {
    idleBytes: number;
    withOrdersBytes: number;
    withUnrelatedBytes: number;
    /** Absent in reports from before the benchmark read it (1 December 2026). */
    laterWithUnrelatedBytes?: number;
  };
  topology: { objects: number; ms: number; perObject: Requests };
  teardownMs?: number;
  sweep?: { workers: number; ms: number }[];
}

/**
 * What the plots read of a BenchReport (harness/bench/run.ts): every BenchReport is one, and so is a
 * report built by hand from a measured table, which carries only the figures the table has.
 */
export interface PlotReport {
  config: { orders: number; unrelated: number; sweepOrders: number };
  brokerFloor?: { ms: number };
  apiFloor: { ms: number };
  topologyFloor?: { ms: number };
  runs: PlotRun[];
}

/** One plot: its file name and its SVG text. */
export interface Plot {
  file: string;
  svg: string;
}

/** Text for an SVG element's content or an attribute's value. */
export function escapeXml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => `&${{ "&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos" }[c]};`,
  );
}

/** A finite number, or undefined for a figure not measured (NaN, which JSON writes as null). */
const measured = (v: number | null | undefined): number | undefined =>
  typeof v === "number" && Number.isFinite(v) ? v : undefined;

export interface Series {
  name: string;
  /** One per category; undefined draws no bar (not measured, or not part of that series). */
  values: (number | undefined)[];
}

export interface BarChart {
  title: string;
  /** A second line under the title: where the figures come from. */
  subtitle?: string;
  xLabel: string;
  yLabel: string;
  categories: string[];
  series: Series[];
  /** How a value reads on its bar and in its tooltip. */
  format: (v: number) => string;
}

const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1"];
const WIDTH = 760;
const HEIGHT = 420;
const MARGIN = { left: 72, right: 16, top: 78, bottom: 80 };

/** The smallest 1, 2 or 5 times a power of ten at or above `max / 5`, and how many such steps reach max. */
function ticks(max: number): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / 5;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const count = Math.ceil(max / step - 1e-9);
  return Array.from({ length: count + 1 }, (_, i) => Number((i * step).toPrecision(12)));
}

/** A category's label in lines of at most `width` characters, at word boundaries. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

const fixed = (v: number) => Number(v.toFixed(1)).toString();

/** A grouped bar chart: a group per category, a bar per series in it, a legend, both axes labelled. */
export function barChart(chart: BarChart): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const values = chart.series.flatMap((s) => s.values.filter((v): v is number => v !== undefined));
  const scale = ticks(Math.max(0, ...values));
  const top = scale[scale.length - 1] ?? 1;
  const y = (v: number) => MARGIN.top + plotH - (v / top) * plotH;
  const groupW = plotW / Math.max(1, chart.categories.length);
  const barW = (groupW * 0.8) / Math.max(1, chart.series.length);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="11">`,
    `<title>${escapeXml(chart.title)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text class="title" x="${WIDTH / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(chart.title)}</text>`,
  ];
  if (chart.subtitle)
    out.push(
      `<text class="subtitle" x="${WIDTH / 2}" y="37" text-anchor="middle" fill="#555555">${escapeXml(chart.subtitle)}</text>`,
    );
  // The legend, one swatch per series, in a row under the title.
  let legendX = MARGIN.left;
  chart.series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length] ?? "#000000";
    out.push(
      `<g class="legend-item"><rect x="${fixed(legendX)}" y="49" width="10" height="10" fill="${color}"/>` +
        `<text x="${fixed(legendX + 14)}" y="58">${escapeXml(s.name)}</text></g>`,
    );
    legendX += 30 + s.name.length * 6.2;
  });
  // The value axis: grid lines and tick labels.
  for (const t of scale)
    out.push(
      `<g class="tick"><line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${fixed(y(t))}" y2="${fixed(y(t))}" stroke="#dddddd"/>` +
        `<text x="${MARGIN.left - 6}" y="${fixed(y(t) + 4)}" text-anchor="end">${escapeXml(chart.format(t))}</text></g>`,
    );
  out.push(
    `<line class="axis y" x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#333333"/>`,
    `<line class="axis x" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH}" stroke="#333333"/>`,
  );
  chart.categories.forEach((category, c) => {
    const groupX = MARGIN.left + c * groupW + groupW * 0.1;
    chart.series.forEach((s, i) => {
      const v = s.values[c];
      if (v === undefined) return;
      const x = groupX + i * barW;
      const label = `${s.name}, ${category}: ${chart.format(v)}`;
      out.push(
        `<rect class="bar" data-series="${escapeXml(s.name)}" data-category="${escapeXml(category)}" data-value="${v}" ` +
          `x="${fixed(x)}" y="${fixed(y(v))}" width="${fixed(barW * 0.92)}" height="${fixed(MARGIN.top + plotH - y(v))}" ` +
          `fill="${PALETTE[i % PALETTE.length] ?? "#000000"}"><title>${escapeXml(label)}</title></rect>`,
        `<text class="value" x="${fixed(x + barW * 0.46)}" y="${fixed(y(v) - 3)}" text-anchor="middle" font-size="9">${escapeXml(chart.format(v))}</text>`,
      );
    });
    const lines = wrap(category, Math.max(8, Math.floor(groupW / 6)));
    out.push(
      `<text class="category" x="${fixed(MARGIN.left + (c + 0.5) * groupW)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">` +
        lines
          .map(
            (line, l) =>
              `<tspan x="${fixed(MARGIN.left + (c + 0.5) * groupW)}" dy="${l === 0 ? 0 : 13}">${escapeXml(line)}</tspan>`,
          )
          .join("") +
        `</text>`,
    );
  });
  out.push(
    `<text class="axis-label x" x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 12}" text-anchor="middle">${escapeXml(chart.xLabel)}</text>`,
    `<text class="axis-label y" x="16" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${MARGIN.top + plotH / 2})">${escapeXml(chart.yLabel)}</text>`,
    `</svg>`,
  );
  return out.join("\n") + "\n";
}

const seconds = (v: number) => `${fixed(v)} s`;
const s = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
const mib = (bytes: number | undefined) => (bytes === undefined ? undefined : bytes / 2 ** 20);
const count = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 2 : 1));

/** How long each phase took on each backend, and the floor it compares with. */
export function phasesPlot(r: PlotReport): BarChart {
  const n = r.config.orders;
  const largerFloor = r.brokerFloor === undefined ? undefined : Math.max(r.brokerFloor.ms, r.apiFloor.ms);
  const rows: [string, (run: PlotRun) => number | undefined, number | undefined][] = [
    [`cold start of ${n} orders`, (run) => run.coldStart?.ms, largerFloor],
    ["restart: every order seen again", (run) => run.restart?.ms, undefined],
    ["rotation: due → all switched", (run) => run.rotation?.switchedMs, undefined],
    ["rotation: due → all swept", (run) => run.rotation?.sweptMs, undefined],
    [`topology alone: ${3 * n} objects Ready`, (run) => run.topology.ms, r.topologyFloor?.ms],
    [`teardown of ${n} orders`, (run) => run.teardownMs, undefined],
  ];
  const used = rows.filter(
    ([, of, floor]) => floor !== undefined || r.runs.some((run) => of(run) !== undefined),
  );
  return {
    title: `Phases of the benchmark, ${n} orders`,
    subtitle: "floor: the broker's or the API server's time for the same work, the larger, in the same run",
    xLabel: "phase",
    yLabel: "seconds",
    categories: used.map(([name]) => name),
    series: [
      ...r.runs.map((run) => ({ name: run.backend, values: used.map(([, of]) => s(of(run))) })),
      ...(used.some(([, , floor]) => floor !== undefined)
        ? [{ name: "floor (same run)", values: used.map(([, , floor]) => s(floor)) }]
        : []),
    ],
    format: seconds,
  };
}

/** Orders Ready per second in the sweep's cold starts, per --max-concurrent-reconciles; none without a sweep. */
export function sweepPlot(r: PlotReport): BarChart | undefined {
  const workers = [...new Set(r.runs.flatMap((run) => (run.sweep ?? []).map((p) => p.workers)))].sort(
    (a, b) => a - b,
  );
  if (workers.length === 0) return undefined;
  const m = r.config.sweepOrders;
  return {
    title: `Workers sweep: cold start of ${m} orders`,
    subtitle: "the operator restarted at each --max-concurrent-reconciles",
    xLabel: "--max-concurrent-reconciles",
    yLabel: "orders Ready per second",
    categories: workers.map(String),
    series: r.runs.map((run) => ({
      name: run.backend,
      values: workers.map((w) => {
        const point = run.sweep?.find((p) => p.workers === w);
        return point && point.ms > 0 ? (m / point.ms) * 1000 : undefined;
      }),
    })),
    format: (v) => `${v.toFixed(2)}/s`,
  };
}

/** The operator's resident memory alone, with the orders, and with the unrelated objects beside them. */
export function memoryPlot(r: PlotReport): BarChart | undefined {
  if (!r.runs.some((run) => run.memory)) return undefined;
  const { orders: n, unrelated: u } = r.config;
  const rows = (
    [
      ["0 orders (the operator alone)", (m) => m.idleBytes],
      [`${n} orders, after the cold start`, (m) => m.withOrdersBytes],
      [`${n} orders, ${u} unrelated Secrets and ${u} ConfigMaps`, (m) => m.withUnrelatedBytes],
      ["the same, a minute later", (m) => m.laterWithUnrelatedBytes],
    ] as [string, (m: NonNullable<PlotRun["memory"]>) => number | undefined][]
  ).filter(([, of]) => r.runs.some((run) => run.memory && measured(of(run.memory)) !== undefined));
  return {
    title: `Operator memory (RSS) against its orders`,
    subtitle: "process_resident_memory_bytes; upstream's figures add its process to vhost-broker's",
    xLabel: "what the operator holds",
    yLabel: "MiB",
    categories: rows.map(([name]) => name),
    series: r.runs
      .filter((run) => run.memory)
      .map((run) => ({
        name: run.backend,
        values: rows.map(([, of]) => mib(measured(run.memory && of(run.memory)))),
      })),
    format: (v) => `${v.toFixed(0)} MiB`,
  };
}

/** One backend's requests per order (per object for the topology load), by phase and by kind. */
export function requestsPlot(r: PlotReport, run: PlotRun): BarChart {
  const n = r.config.orders;
  const perOrder = (c: Requests): Requests => ({
    apiWrites: (measured(c.apiWrites) ?? NaN) / n,
    apiReads: (measured(c.apiReads) ?? NaN) / n,
    brokerWrites: (measured(c.brokerWrites) ?? NaN) / n,
    brokerReads: (measured(c.brokerReads) ?? NaN) / n,
    openBaoRequests: (measured(c.openBaoRequests) ?? NaN) / n,
  });
  const phases: [string, Requests | undefined][] = [
    ["cold start, per order", run.coldStart?.perOrder],
    ["restart, per order", run.restart && perOrder(run.restart.counters)],
    ["rotation (sweep included), per order", run.rotation?.perOrder],
    ["topology alone, per object", run.topology.perObject],
  ];
  const present = phases.filter((p): p is [string, Requests] => p[1] !== undefined);
  const kinds: [string, keyof Requests][] = [
    ["API writes", "apiWrites"],
    ["API reads", "apiReads"],
    ["broker writes", "brokerWrites"],
    ["broker reads", "brokerReads"],
    ["OpenBao requests", "openBaoRequests"],
  ];
  return {
    title: `Requests per order by phase: ${run.backend}, ${n} orders`,
    subtitle: "from the operator's metrics; no bar: not counted on this backend",
    xLabel: "phase",
    yLabel: "requests per order (topology: per object)",
    categories: present.map(([name]) => name),
    series: kinds.map(([name, key]) => ({ name, values: present.map(([, c]) => measured(c[key])) })),
    format: count,
  };
}

/** A file name's part for a backend's name. */
const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, "-") || "backend";

/** Every plot the report has figures for. */
export function plotsOf(r: PlotReport): Plot[] {
  const plots: Plot[] = [{ file: "phases.svg", svg: barChart(phasesPlot(r)) }];
  const sweep = sweepPlot(r);
  if (sweep) plots.push({ file: "sweep.svg", svg: barChart(sweep) });
  const memory = memoryPlot(r);
  if (memory) plots.push({ file: "memory.svg", svg: barChart(memory) });
  for (const run of r.runs)
    plots.push({ file: `requests-${slug(run.backend)}.svg`, svg: barChart(requestsPlot(r, run)) });
  return plots;
}

/** Writes every plot into `dir` (made if missing); returns the files written. */
export function writePlots(r: PlotReport, dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  return plotsOf(r).map(({ file, svg }) => {
    const path = join(dir, file);
    writeFileSync(path, svg);
    return path;
  });
}

if (import.meta.main) {
  const [report, dir] = process.argv.slice(2);
  if (!report || !dir) {
    process.stderr.write("Usage: node harness/bench/plots.ts REPORT.json DIR\n");
    process.exit(2);
  }
  const written = writePlots(JSON.parse(readFileSync(report, "utf8")) as PlotReport, dir);
  process.stdout.write(written.map((p) => `${p}\n`).join(""));
}
