import { describe, expect, it } from "vitest";
import { evaluate, parseScrape } from "./promql.ts";

const scrape = (at: number, errors: number) =>
  parseScrape(
    [
      "# TYPE controller_runtime_reconcile_errors_total counter",
      `controller_runtime_reconcile_errors_total{controller="a"} ${errors}`,
      'controller_runtime_reconcile_errors_total{controller="b"} 7',
      'vhost_broker_order_ready_status{name="o",condition="False"} 1',
      'vhost_broker_order_ready_status{name="o",condition="True"} 0',
      'vhost_broker_order_next_rotation_timestamp_seconds{name="o"} 1000',
      'vhost_broker_cluster_state{cluster="t",state="unreachable"} 1',
    ].join("\n"),
    at,
    { job: "vb-metrics" },
  );

describe("the PromQL evaluator of the alert tests", () => {
  it("rates counters over the scrapes in the range and aggregates by label", () => {
    const expr =
      'sum by (controller) (rate(controller_runtime_reconcile_errors_total{job="vb-metrics"}[5m])) > 0';
    expect(evaluate(expr, [scrape(100, 1), scrape(110, 3)])).toEqual([
      { labels: { controller: "a" }, value: 0.2 },
    ]);
    expect(evaluate(expr, [scrape(100, 3), scrape(110, 3)])).toEqual([]);
    // Out of the range: only the last scrape, no rate.
    expect(evaluate(expr, [scrape(100, 1), scrape(500, 3)])).toEqual([]);
  });

  it("filters by matchers and compares, and takes time() from the last scrape", () => {
    expect(
      evaluate('max by (name) (vhost_broker_order_ready_status{condition="False"}) == 1', [scrape(1, 0)]),
    ).toEqual([{ labels: { name: "o" }, value: 1 }]);
    expect(
      evaluate('vhost_broker_cluster_state{state=~"unreachable|refused"} == 1', [scrape(1, 0)]),
    ).toHaveLength(1);
    const overdue = "time() - max by (name) (vhost_broker_order_next_rotation_timestamp_seconds) > 3600";
    expect(evaluate(overdue, [scrape(2000, 0)])).toEqual([]);
    expect(evaluate(overdue, [scrape(5000, 0)])).toEqual([{ labels: { name: "o" }, value: 4000 }]);
  });

  it("refuses what it cannot evaluate", () => {
    expect(() => evaluate("histogram_quantile(0.9, x)", [scrape(1, 0)])).toThrow();
  });
});
