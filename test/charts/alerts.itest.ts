// The chart's alerts under Debian's `promtool test rules`: the PrometheusRule rendered for the release vb
// (job "vb-metrics") is the rule file, and test/charts/alerts/*.yaml say when each alert fires and when
// it does not. Every alert has such a test.
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as yaml from "yaml";
import { holds, parseScrape, promtool } from "../../harness/probes/promtool.ts";
import { manifestObjects, renderChart } from "../../harness/charts/helm.ts";

const testsDir = new URL("./alerts/", import.meta.url);
const testFiles = readdirSync(testsDir).filter((f) => f.endsWith(".yaml"));

interface RuleGroups {
  groups: { rules: { alert: string; expr: string }[] }[];
}

describe("the chart's alerts under promtool", () => {
  let dir = "";
  let groups: RuleGroups;

  beforeAll(async () => {
    const manifest = await renderChart("vhost-broker", {
      release: "vb",
      namespace: "vb-system",
      set: { "metrics.prometheusRule.enabled": "true", "settings.openbao-address": "http://127.0.0.1:1" },
    });
    const rule = manifestObjects(manifest).find((o) => o.kind === "PrometheusRule");
    groups = rule?.["spec"] as RuleGroups;
    dir = mkdtempSync(`${tmpdir()}/vhost-broker-alerts-`);
    writeFileSync(`${dir}/rules.yaml`, yaml.stringify(groups));
    for (const file of testFiles) copyFileSync(new URL(file, testsDir), `${dir}/${file}`);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("reads the rendered rules as a valid rule file", async () => {
    const result = await promtool(["check", "rules", "rules.yaml"], dir);
    expect(result.output).toContain("SUCCESS: 9 rules found");
    expect(result.ok).toBe(true);
  });

  it("passes every rule test file", async () => {
    const result = await promtool(["test", "rules", ...testFiles], dir);
    expect(result.output, result.output).not.toContain("FAILED");
    expect(result.ok, result.output).toBe(true);
    expect(result.output.match(/SUCCESS/g)).toHaveLength(testFiles.length);
  });

  it("tests every alert of the rule", () => {
    const tested = new Set(
      testFiles.flatMap((file) =>
        (
          yaml.parse(readFileSync(new URL(file, testsDir), "utf8")) as {
            tests: { alert_rule_test?: { alertname: string }[] }[];
          }
        ).tests.flatMap((t) => (t.alert_rule_test ?? []).map((a) => a.alertname)),
      ),
    );
    const alerts = groups.groups.flatMap((g) => g.rules.map((r) => r.alert));
    expect(alerts.filter((a) => !tested.has(a))).toEqual([]);
  });

  it("fails a test whose expectation is wrong, naming what it got", async () => {
    writeFileSync(
      `${dir}/wrong.yaml`,
      yaml.stringify({
        rule_files: ["rules.yaml"],
        tests: [
          {
            interval: "1m",
            input_series: [],
            alert_rule_test: [{ eval_time: "10m", alertname: "VhostBrokerNoLeader", exp_alerts: [] }],
          },
        ],
      }),
    );
    const result = await promtool(["test", "rules", "wrong.yaml"], dir);
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/FAILED[\s\S]*VhostBrokerNoLeader[\s\S]*got:/);
  });
});

describe("an expression over real scrapes, by promtool", () => {
  const scrape = (at: number, errors: number) =>
    parseScrape(
      [
        "# TYPE controller_runtime_reconcile_errors_total counter",
        `controller_runtime_reconcile_errors_total{controller="a"} ${errors}`,
        'controller_runtime_reconcile_errors_total{controller="b"} 7',
        'vhost_broker_order_ready_status{name="o",condition="False"} 1',
        'vhost_broker_order_ready_status{name="o",condition="True"} 0',
        'vhost_broker_cluster_state{cluster="t",state="unreachable"} 1',
      ].join("\n"),
      at,
      { job: "vb-metrics" },
    );
  const rate =
    'sum by (controller) (rate(controller_runtime_reconcile_errors_total{job="vb-metrics"}[5m])) > 0';

  it("holds for the labels asked about only", async () => {
    const rising = [scrape(1000, 1), scrape(1010, 3)];
    expect(await holds(rate, rising, { controller: "a" })).toBe(true);
    expect(await holds(rate, rising, { controller: "b" })).toBe(false);
    expect(await holds(rate, [scrape(1000, 3), scrape(1010, 3)])).toBe(false);
    expect(
      await holds('max by (name) (vhost_broker_order_ready_status{condition="False"}) == 1', [scrape(5, 0)], {
        name: "o",
      }),
    ).toBe(true);
  });

  it("refuses what promtool cannot read", async () => {
    await expect(holds("sum(", [scrape(1, 0)])).rejects.toThrow(/promtool could not evaluate/);
  });
});
