// The chart's Grafana dashboard (deploy/vhost-broker/dashboards/vhost-broker.json): every query names
// only metrics the operator exports (the registry docs/metrics.md is checked against, built the same way
// as in src/operator/metrics-docs.test.ts), and only labels those metrics carry; the panels the platform
// team looks for are there.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ClusterRegistry, registerClusterStates } from "../../src/clusters/registry.ts";
import { GatekeeperMetrics } from "../../src/gatekeeper/metrics.ts";
import { DomainMetrics } from "../../src/operator/domain-metrics.ts";
import { orderKindRefs } from "../../src/operator/order-kinds.ts";
import { realClock } from "../../src/runtime/base/clock.ts";
import { loadConfig, runtimeSettings } from "../../src/runtime/process/config.ts";
import type { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { createLogger } from "../../src/runtime/base/logging.ts";
import { Manager } from "../../src/runtime/process/manager.ts";
import { Metrics } from "../../src/runtime/loop/metrics.ts";
import { topologyControllerKinds } from "../../src/topology/index.ts";

interface Target {
  expr?: string;
  query?: string | { query?: string };
  definition?: string;
}
interface Panel {
  type: string;
  title: string;
  targets?: Target[];
  panels?: Panel[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: (Target & { name: string; type: string })[] };
}

const dashboard = JSON.parse(
  readFileSync(new URL("../../deploy/vhost-broker/dashboards/vhost-broker.json", import.meta.url), "utf8"),
) as Dashboard;

/** What the process registers: each metric's name, type and label names. */
function exported(): Map<string, { type: string; labels: Set<string> }> {
  const metrics = new Metrics();
  const log = createLogger({ level: "fatal" });
  const management = {} as KubeRest;
  const clusters = new ClusterRegistry({
    management,
    secretNamespace: "c5c3-clusters",
    clock: realClock,
    log,
    resyncMs: 0,
    watchRestartMs: 60_000,
  });
  registerClusterStates(metrics.registry, clusters);
  const manager = new Manager({
    config: loadConfig(runtimeSettings, [], {}),
    log,
    metrics,
    clock: realClock,
    clusters,
    management,
    identity: "dashboard",
  });
  new GatekeeperMetrics(metrics.registry);
  new DomainMetrics(metrics.registry, manager, {
    orders: orderKindRefs,
    topology: topologyControllerKinds.map((k) => k.kind),
  });
  const out = new Map<string, { type: string; labels: Set<string> }>();
  for (const metric of metrics.registry.getMetricsAsArray()) {
    const labels = (metric as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
    const type = String((metric as unknown as { type?: string }).type ?? "");
    out.set(metric.name, { type, labels: new Set(labels) });
  }
  return out;
}

const KEYWORDS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"]);
const OPERATORS = new Set(["and", "or", "unless", "bool", "offset", "atan2"]);
/** Aggregations may put their grouping before the parenthesis: `sum by (kind) (x)`. */
const AGGREGATIONS = new Set([
  ...["sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values"],
  ...["bottomk", "topk", "quantile", "limitk", "limit_ratio"],
]);

export interface Selector {
  metric: string;
  /** Labels of its matchers, `{a="x", b!~"y"}`. */
  labels: string[];
}

/**
 * The metric selectors and grouping labels of a PromQL expression (Grafana's `$variables` allowed): a
 * tokenizer, not a parser, but one that knows strings, matchers, ranges, functions and the grouping
 * keywords, which is all a dashboard query uses.
 */
export function promqlNames(expr: string): { selectors: Selector[]; grouping: string[] } {
  const selectors: Selector[] = [];
  const grouping: string[] = [];
  let i = 0;
  const peek = () => {
    let j = i;
    while (j < expr.length && /\s/.test(expr[j] ?? "")) j++;
    return { char: expr[j] ?? "", at: j };
  };
  const skipString = () => {
    const quote = expr[i];
    i++;
    while (i < expr.length && expr[i] !== quote) i += expr[i] === "\\" ? 2 : 1;
    i++;
  };
  const identifier = () => {
    const match = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(expr.slice(i));
    i += match?.[0].length ?? 1;
    return match?.[0] ?? "";
  };
  /** A `{...}` matcher list at i: the label names. */
  const matchers = (): string[] => {
    const labels: string[] = [];
    i++;
    while (i < expr.length && expr[i] !== "}") {
      const c = expr[i] ?? "";
      if (c === '"' || c === "'" || c === "`") skipString();
      else if (/[a-zA-Z_]/.test(c)) labels.push(identifier());
      else i++;
    }
    i++;
    return labels;
  };
  /** A `(...)` label list at i. */
  const labelList = (): string[] => {
    const end = expr.indexOf(")", i);
    const list = expr
      .slice(i + 1, end)
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
    i = end + 1;
    return list;
  };
  while (i < expr.length) {
    const c = expr[i] ?? "";
    if (c === '"' || c === "'" || c === "`") skipString();
    else if (c === "[") i = expr.indexOf("]", i) + 1;
    else if (c === "$") {
      i++;
      if (expr[i] === "{") i = expr.indexOf("}", i) + 1;
      else identifier();
    } else if (c === "{") {
      // A selector without a metric name: not used by the dashboard, and not allowed here.
      throw new Error(`a selector without a metric name in ${expr}`);
    } else if (/[0-9.]/.test(c)) {
      i++;
      while (/[0-9a-zA-Z.]/.test(expr[i] ?? "")) i++;
    } else if (/[a-zA-Z_:]/.test(c)) {
      const name = identifier();
      const next = peek();
      if (KEYWORDS.has(name)) {
        i = next.at;
        if (next.char === "(") grouping.push(...labelList());
      } else if (OPERATORS.has(name)) {
        // an operator: nothing to record
      } else if (next.char === "(" || AGGREGATIONS.has(name)) {
        // a function or an aggregation
      } else {
        let labels: string[] = [];
        if (next.char === "{") {
          i = next.at;
          labels = matchers();
        }
        selectors.push({ metric: name, labels });
      }
    } else i++;
  }
  return { selectors, grouping };
}

function queries(): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  const walk = (panels: Panel[]) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        if (target.expr !== undefined) out.push({ where: panel.title, expr: target.expr });
      }
      walk(panel.panels ?? []);
    }
  };
  walk(dashboard.panels);
  for (const variable of dashboard.templating.list) {
    if (variable.type !== "query") continue;
    const query = typeof variable.query === "string" ? variable.query : (variable.query?.query ?? "");
    const inner = /^label_values\((.*),\s*(\w+)\)$/.exec(query);
    if (!inner) throw new Error(`variable ${variable.name}: not a label_values query: ${query}`);
    out.push({ where: `variable ${variable.name}`, expr: inner[1] ?? "" });
  }
  return out;
}

describe("promqlNames", () => {
  it("reads selectors, matcher labels and grouping, and skips functions, strings, ranges and variables", () => {
    expect(
      promqlNames(
        'histogram_quantile(0.99, sum by (le, backend) (rate(a_seconds_bucket{job=~"$job", x!="a{b}"}[$__rate_interval]))) or vector(0) > bool 1',
      ),
    ).toEqual({
      selectors: [{ metric: "a_seconds_bucket", labels: ["job", "x"] }],
      grouping: ["le", "backend"],
    });
    expect(promqlNames("count(time() - max without (name) (b offset 5m)) and on (kind) c")).toEqual({
      selectors: [
        { metric: "b", labels: [] },
        { metric: "c", labels: [] },
      ],
      grouping: ["name", "kind"],
    });
  });
});

describe("the Grafana dashboard", () => {
  const metrics = exported();
  /** Series a Prometheus scrape adds to every target; `le` of a histogram's buckets. */
  const scrapeLabels = new Set(["job", "instance"]);
  const metricOf = (series: string) => {
    if (metrics.has(series)) return { name: series, ...metrics.get(series)!, bucket: false };
    const base = series.replace(/_(bucket|sum|count)$/, "");
    const m = metrics.get(base);
    if (m && (m.type === "histogram" || m.type === "summary"))
      return { name: base, ...m, bucket: series.endsWith("_bucket") };
    return undefined;
  };

  it("names only metrics the operator exports, and only their labels", () => {
    expect(metrics.size).toBeGreaterThan(40);
    const all = queries();
    expect(all.length).toBeGreaterThan(20);
    for (const { where, expr } of all) {
      const { selectors, grouping } = promqlNames(expr);
      expect(selectors.length, `${where}: ${expr}`).toBeGreaterThan(0);
      const known = new Set(scrapeLabels);
      for (const { metric, labels } of selectors) {
        const found = metricOf(metric);
        expect(found, `${where}: ${metric} is not exported (docs/metrics.md)`).toBeDefined();
        if (!found) continue;
        for (const l of found.labels) known.add(l);
        if (found.bucket) known.add("le");
        for (const label of labels) {
          expect(
            found.labels.has(label) || scrapeLabels.has(label),
            `${where}: ${metric} has no label ${label}`,
          ).toBe(true);
        }
      }
      for (const label of grouping) expect(known.has(label), `${where}: no series has ${label}`).toBe(true);
    }
  });

  it("shows orders Ready, next rotations, held sweeps, reconcile errors and backend latency", () => {
    const titles = dashboard.panels.map((p) => p.title);
    for (const title of [
      "Orders Ready",
      "Orders not Ready",
      "Next rotations",
      "Held sweeps",
      "Reconcile errors",
      "Backend latency (p50, p99)",
    ])
      expect(titles).toContain(title);
    expect(dashboard.uid).toBe("vhost-broker");
    // Each query selects the job the variable names, so two releases never mix.
    for (const { where, expr } of queries()) {
      if (where.startsWith("variable")) continue;
      for (const { metric, labels } of promqlNames(expr).selectors)
        expect(labels, `${where}: ${metric}`).toContain("job");
    }
  });
});
