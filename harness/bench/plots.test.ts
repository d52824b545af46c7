// The benchmark's plots: well-formed SVG with a title, labelled axes, one bar per measured value, and
// every text escaped.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { barChart, escapeXml, plotsOf, writePlots, type PlotReport, type PlotRun } from "./plots.ts";
import type { BenchReport } from "./run.ts";

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's own text, entities decoded, without its children's. */
  text: string;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** Decodes the five entities and character references; throws on a bare & or any other entity. */
function decode(text: string): string {
  if (/<|>/.test(text.replace(/&[a-z]+;|&#\d+;/g, ""))) throw new Error(`markup character in text: ${text}`);
  return text.replace(/&([^;\s]*);?/g, (whole, ref: string) => {
    if (!whole.endsWith(";")) throw new Error(`a bare & in ${text}`);
    if (ref.startsWith("#")) return String.fromCodePoint(Number(ref.slice(1)));
    const c = ENTITIES[ref];
    if (c === undefined) throw new Error(`unknown entity &${ref}; in ${text}`);
    return c;
  });
}

/** A small XML parser: elements, quoted attributes and text; throws on anything not well-formed. */
function parseXml(xml: string): XmlElement {
  const root: XmlElement = { name: "#document", attributes: {}, children: [], text: "" };
  const stack = [root];
  const token = /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>|([^<]+)|(<)/gy;
  for (let m = token.exec(xml); m; m = token.exec(xml)) {
    const [, closing, name, attrs, selfClosing, text, stray] = m;
    const top = stack[stack.length - 1] as XmlElement;
    if (stray) throw new Error(`not a tag at ${m.index}: ${xml.slice(m.index, m.index + 40)}`);
    if (text !== undefined) {
      if (stack.length === 1 && text.trim()) throw new Error(`text outside the root: ${text}`);
      top.text += decode(text);
    } else if (closing) {
      if (top.name !== name) throw new Error(`</${name}> closes <${top.name}>`);
      stack.pop();
    } else {
      const attributes: Record<string, string> = {};
      for (const [, key, value] of (attrs ?? "").matchAll(/([\w:.-]+)="([^"]*)"/g)) {
        if (key === undefined || key in attributes) throw new Error(`attribute ${key} twice in <${name}>`);
        attributes[key] = decode(value ?? "");
      }
      const element: XmlElement = { name: name ?? "", attributes, children: [], text: "" };
      if (stack.length === 1 && root.children.length > 0) throw new Error("a second root element");
      top.children.push(element);
      if (!selfClosing) stack.push(element);
    }
    if (token.lastIndex === xml.length) break;
  }
  if (token.lastIndex !== xml.length && xml.length > 0)
    throw new Error(`unparsed text at ${token.lastIndex}`);
  if (stack.length !== 1) throw new Error(`<${stack[stack.length - 1]?.name}> is not closed`);
  const [svg] = root.children;
  if (!svg) throw new Error("no root element");
  return svg;
}

const all = (e: XmlElement): XmlElement[] => [e, ...e.children.flatMap(all)];
const byClass = (svg: XmlElement, cls: string) =>
  all(svg).filter((e) => (e.attributes.class ?? "").split(" ").includes(cls));
/** An element's text with its tspans' text. */
const textOf = (e: XmlElement): string => [e.text, ...e.children.map(textOf)].filter(Boolean).join(" ");

const counters = (apiWrites: number, apiReads: number, broker: number | null, openBao: number) => ({
  apiWrites,
  apiReads,
  brokerWrites: broker,
  brokerReads: broker,
  openBaoRequests: openBao,
});

const run = (backend: string, scale: number, broker: number | null): PlotRun => ({
  backend,
  coldStart: { ms: 30_000 * scale, perOrder: counters(26, 1, broker, 3.2) },
  restart: { ms: 3_000 * scale, counters: counters(0, 80, broker === null ? null : 500, 100) },
  rotation: { switchedMs: 15_000 * scale, sweptMs: 45_000 * scale, perOrder: counters(20, 0, broker, 2) },
  memory: {
    idleBytes: 96 * 2 ** 20,
    withOrdersBytes: 142 * 2 ** 20,
    withUnrelatedBytes: 141 * 2 ** 20,
    laterWithUnrelatedBytes: 140 * 2 ** 20,
  },
  topology: { objects: 300, ms: 9_000 * scale, perObject: counters(3, 0, broker, 0) },
  teardownMs: 17_000 * scale,
  sweep: [
    { workers: 1, ms: 20_000 * scale },
    { workers: 4, ms: 10_000 * scale },
    { workers: 8, ms: 12_000 * scale },
  ],
});

// Two backends, the second named with markup and counting no broker requests (NaN, null in JSON).
const report: PlotReport = {
  config: { orders: 100, unrelated: 1000, sweepOrders: 50 },
  brokerFloor: { ms: 20_000 },
  apiFloor: { ms: 8_000 },
  topologyFloor: { ms: 500 },
  runs: [run("builtin", 1, 2), run(`up<stream> & "co"`, 1.5, null)],
};

describe("the benchmark's plots", () => {
  const plots = plotsOf(report);
  const svg = (file: string) => {
    const plot = plots.find((p) => p.file === file);
    if (!plot) throw new Error(`no ${file} among ${plots.map((p) => p.file).join(", ")}`);
    return parseXml(plot.svg);
  };

  it("are well-formed SVG, each with a title and both axes labelled", () => {
    expect(plots.map((p) => p.file)).toEqual([
      "phases.svg",
      "sweep.svg",
      "memory.svg",
      "requests-builtin.svg",
      "requests-up-stream-co-.svg",
    ]);
    for (const plot of plots) {
      const root = parseXml(plot.svg);
      expect(root.name, plot.file).toBe("svg");
      expect(root.attributes.xmlns).toBe("http://www.w3.org/2000/svg");
      expect(root.children[0]?.name, plot.file).toBe("title");
      expect(byClass(root, "title").map(textOf)[0], plot.file).toBe(root.children[0]?.text);
      expect(byClass(root, "axis-label").map((e) => e.attributes.class)).toEqual([
        "axis-label x",
        "axis-label y",
      ]);
      for (const label of byClass(root, "axis-label")) expect(label.text.length).toBeGreaterThan(0);
    }
  });

  it("draw one bar per measured value, and none for a figure not measured", () => {
    const phases = svg("phases.svg");
    const bars = byClass(phases, "bar");
    // 6 phases on each backend, and the floors of the cold start and of the topology load.
    expect(bars).toHaveLength(6 * 2 + 2);
    const cold = bars.filter((b) => b.attributes["data-category"] === "cold start of 100 orders");
    expect(cold.map((b) => [b.attributes["data-series"], Number(b.attributes["data-value"])])).toEqual([
      ["builtin", 30],
      [`up<stream> & "co"`, 45],
      ["floor (same run)", 20],
    ]);
    expect(byClass(phases, "category").map(textOf)).toContain("cold start of 100 orders");
    expect(byClass(phases, "value")).toHaveLength(bars.length);

    const sweep = byClass(svg("sweep.svg"), "bar");
    expect(
      sweep.filter((b) => b.attributes["data-series"] === "builtin").map((b) => b.attributes["data-value"]),
    ).toEqual(["2.5", "5", "4.166666666666667"]);
    expect(byClass(svg("memory.svg"), "bar").map((b) => Number(b.attributes["data-value"]))).toEqual([
      96, 96, 142, 142, 141, 141, 140, 140,
    ]);
    // 4 phases x 5 kinds; upstream's broker requests are not counted: 4 x 3 bars.
    expect(byClass(svg("requests-builtin.svg"), "bar")).toHaveLength(20);
    const upstream = byClass(svg("requests-up-stream-co-.svg"), "bar");
    expect(upstream).toHaveLength(12);
    expect(upstream.some((b) => b.attributes["data-series"]?.startsWith("broker"))).toBe(false);
    expect(
      upstream
        .filter((b) => b.attributes["data-category"] === "restart, per order")
        .map((b) => b.attributes["data-value"]),
    ).toEqual(["0", "0.8", "1"]);
  });

  it("escape every text and attribute they take from the report", () => {
    const phases = plots.find((p) => p.file === "phases.svg")?.svg ?? "";
    expect(phases).not.toContain("up<stream>");
    expect(phases).toContain("up&lt;stream&gt; &amp; &quot;co&quot;");
    const legend = byClass(parseXml(phases), "legend-item").map(textOf);
    expect(legend).toEqual(["builtin", `up<stream> & "co"`, "floor (same run)"]);
    expect(escapeXml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;");
    const chart = parseXml(
      barChart({
        title: "a < b & c",
        xLabel: "x > y",
        yLabel: `"y"`,
        categories: ["<one>"],
        series: [{ name: "s&t", values: [1] }],
        format: (v) => `${v} <units>`,
      }),
    );
    expect(byClass(chart, "title").map(textOf)).toEqual(["a < b & c"]);
    expect(byClass(chart, "axis-label").map(textOf)).toEqual(["x > y", `"y"`]);
    expect(byClass(chart, "bar")[0]?.children[0]?.text).toBe("s&t, <one>: 1 <units>");
  });

  it("leave out a sweep that was not run, and read a report of the topology load alone", () => {
    const topologyOnly: PlotReport = {
      config: { orders: 100, unrelated: 0, sweepOrders: 100 },
      apiFloor: { ms: 8_000 },
      topologyFloor: { ms: 500 },
      runs: [{ backend: "builtin", topology: { objects: 300, ms: 9_000, perObject: counters(3, 0, 1, 0) } }],
    };
    const files = plotsOf(topologyOnly).map((p) => p.file);
    expect(files).toEqual(["phases.svg", "requests-builtin.svg"]);
    const phases = parseXml(plotsOf(topologyOnly)[0]?.svg ?? "");
    expect(byClass(phases, "bar").map((b) => b.attributes["data-category"])).toEqual([
      "topology alone: 300 objects Ready",
      "topology alone: 300 objects Ready",
    ]);
  });

  it("are written into a folder, and a BenchReport is a PlotReport", () => {
    const parent = mkdtempSync(join(tmpdir(), "bench-plots-"));
    const dir = join(parent, "plots");
    try {
      const written = writePlots(report, dir);
      expect(readdirSync(dir).sort()).toEqual(plots.map((p) => p.file).sort());
      expect(readFileSync(written[0] ?? "", "utf8")).toBe(plots[0]?.svg);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
    // Compile-time: the benchmark's own report type fits what the plots read.
    const fits = (r: BenchReport): PlotReport => r;
    expect(fits).toBeTypeOf("function");
  });

  it("read the committed reports the documentation's plots come from, and match the committed SVGs", () => {
    for (const [report, dir] of [
      ["docs/performance/latest-run.json", "docs/performance"],
      ["docs/performance/backends-run.json", "docs/performance/backends"],
      ["docs/performance/two-replicas-run.json", "docs/performance/two-replicas"],
    ] as const) {
      const committed = JSON.parse(readFileSync(report, "utf8")) as PlotReport;
      const drawn = plotsOf(committed);
      expect(
        readdirSync(dir)
          .filter((f) => f.endsWith(".svg"))
          .sort(),
        dir,
      ).toEqual(drawn.map((p) => p.file).sort());
      for (const plot of drawn) {
        parseXml(plot.svg);
        expect(readFileSync(join(dir, plot.file), "utf8"), `${dir}/${plot.file}`).toBe(plot.svg);
      }
    }
  });

  it("leave out a memory figure the report does not have", () => {
    const older: PlotReport = {
      ...report,
      runs: report.runs.map((r) => ({
        ...r,
        memory: r.memory && { ...r.memory, laterWithUnrelatedBytes: undefined },
      })),
    };
    const memory = parseXml(plotsOf(older).find((p) => p.file === "memory.svg")?.svg ?? "");
    expect(byClass(memory, "category").map(textOf)).not.toContain("the same, a minute later");
    expect(byClass(memory, "bar")).toHaveLength(6);
  });
});
