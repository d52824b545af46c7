// The chart's alerts under Debian's `promtool test rules`: the PrometheusRule rendered for the release vb
// (job "vb-metrics") is the rule file, and test/charts/alerts/*.yaml say when each alert fires and when
// it does not. Every alert has such a test, a description and a runbook_url at a section of
// docs/metrics.md. The rule rendered with a PodMonitor and an alert dropped and two re-rated is tested
// the same way (test/charts/alerts/values/).
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as yaml from "yaml";
import { holds, parseScrape, promtool } from "../../harness/probes/promtool.ts";
import { manifestObjects, renderChart } from "../../harness/charts/helm.ts";

const testsDir = new URL("./alerts/", import.meta.url);
const testFiles = readdirSync(testsDir).filter((f) => f.endsWith(".yaml"));
const valuesDir = new URL("./alerts/values/", import.meta.url);
const valuesFiles = readdirSync(valuesDir).filter((f) => f.endsWith(".yaml"));

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
interface RuleGroups {
  groups: { rules: Rule[] }[];
}

const ruleOf = async (values: Record<string, unknown>, namespace = "vb-system") => {
  const manifest = await renderChart("vhost-broker", {
    release: "vb",
    namespace,
    values: {
      settings: { "openbao-address": "http://127.0.0.1:1" },
      ...values,
      metrics: {
        ...(values["metrics"] as object | undefined),
        prometheusRule: {
          enabled: true,
          ...(values["metrics"] as { prometheusRule?: object } | undefined)?.prometheusRule,
        },
      },
    },
  });
  const rule = manifestObjects(manifest).find((o) => o.kind === "PrometheusRule");
  return rule?.["spec"] as RuleGroups;
};
const rulesOf = (groups: RuleGroups) => groups.groups.flatMap((g) => g.rules);

/** GitHub's anchors of a page's headings: lower case, spaces to dashes, punctuation dropped. */
const anchors = (page: string) =>
  new Set(
    [...page.matchAll(/^#+ (.+)$/gm)].map((m) =>
      (m[1] ?? "")
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, "")
        .replace(/ /g, "-"),
    ),
  );

describe("the chart's alerts under promtool", () => {
  let dir = "";
  let groups: RuleGroups;

  beforeAll(async () => {
    groups = await ruleOf({});
    dir = mkdtempSync(`${tmpdir()}/vhost-broker-alerts-`);
    writeFileSync(`${dir}/rules.yaml`, yaml.stringify(groups));
    for (const file of testFiles) copyFileSync(new URL(file, testsDir), `${dir}/${file}`);
    const withValues = await ruleOf({
      metrics: {
        podMonitor: { enabled: true },
        prometheusRule: {
          disabled: ["VhostBrokerSqlObjectNotReady"],
          overrides: {
            VhostBrokerOrderNotReady: { for: "1h", severity: "info" },
            VhostBrokerRotationOverdue: { for: "30m" },
          },
        },
      },
    });
    writeFileSync(`${dir}/rules-values.yaml`, yaml.stringify(withValues));
    for (const file of valuesFiles) copyFileSync(new URL(file, valuesDir), `${dir}/${file}`);
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

  it("passes the rule test files of the rule rendered with a PodMonitor, an alert dropped and two re-rated", async () => {
    const check = await promtool(["check", "rules", "rules-values.yaml"], dir);
    expect(check.output).toContain("SUCCESS: 8 rules found");
    const result = await promtool(["test", "rules", ...valuesFiles], dir);
    expect(result.output, result.output).not.toContain("FAILED");
    expect(result.ok, result.output).toBe(true);
    expect(result.output.match(/SUCCESS/g)).toHaveLength(valuesFiles.length);
  });

  it("describes every alert and points its runbook_url at its section of docs/metrics.md", () => {
    const sections = anchors(readFileSync(new URL("../../docs/metrics.md", import.meta.url), "utf8"));
    for (const rule of rulesOf(groups)) {
      expect(rule.annotations["summary"], rule.alert).toBeTruthy();
      expect(rule.annotations["description"], rule.alert).toBeTruthy();
      const url = new URL(rule.annotations["runbook_url"] ?? "");
      expect(url.pathname, rule.alert).toMatch(/\/docs\/metrics\.md$/);
      expect(sections, rule.alert).toContain(url.hash.slice(1));
      expect(url.hash, rule.alert).toBe(`#${rule.alert.toLowerCase()}`);
    }
  });

  it("selects the job the values name, and takes the runbooks' page from the values", async () => {
    const jobs = (g: RuleGroups) =>
      new Set(rulesOf(g).flatMap((r) => [...r.expr.matchAll(/job="([^"]*)"/g)].map((m) => m[1])));
    expect(jobs(groups)).toEqual(new Set(["vb-metrics"]));
    expect(jobs(await ruleOf({ metrics: { podMonitor: { enabled: true } } }, "ops"))).toEqual(
      new Set(["ops/vb"]),
    );
    const custom = await ruleOf({
      metrics: {
        podMonitor: { enabled: true },
        prometheusRule: { job: "kubernetes-pods", runbookBaseURL: "https://docs.example/metrics" },
      },
    });
    expect(jobs(custom)).toEqual(new Set(["kubernetes-pods"]));
    for (const rule of rulesOf(custom))
      expect(rule.annotations["runbook_url"]).toBe(
        `https://docs.example/metrics#${rule.alert.toLowerCase()}`,
      );
  });

  it("drops the alerts named and re-rates the ones overridden, leaving the others as they were", async () => {
    const changed = await ruleOf({
      metrics: {
        prometheusRule: {
          disabled: ["VhostBrokerSqlObjectNotReady", "VhostBrokerTargetClusterNotSynced"],
          overrides: { VhostBrokerNoLeader: { severity: "page" }, VhostBrokerBackupFailing: { for: "5m" } },
        },
      },
    });
    const before = new Map(rulesOf(groups).map((r) => [r.alert, r]));
    const after = new Map(rulesOf(changed).map((r) => [r.alert, r]));
    expect([...before.keys()].filter((a) => !after.has(a))).toEqual([
      "VhostBrokerSqlObjectNotReady",
      "VhostBrokerTargetClusterNotSynced",
    ]);
    expect(after.get("VhostBrokerNoLeader")).toEqual({
      ...before.get("VhostBrokerNoLeader"),
      labels: { severity: "page" },
    });
    expect(after.get("VhostBrokerBackupFailing")).toEqual({
      ...before.get("VhostBrokerBackupFailing"),
      for: "5m",
    });
    for (const name of [
      "VhostBrokerReconcileErrors",
      "VhostBrokerOrderNotReady",
      "VhostBrokerRotationOverdue",
    ])
      expect(after.get(name), name).toEqual(before.get(name));
    await expect(ruleOf({ metrics: { prometheusRule: { disabled: ["VhostBrokerTypo"] } } })).rejects.toThrow(
      /disabled/,
    );
    await expect(
      ruleOf({ metrics: { prometheusRule: { overrides: { VhostBrokerTypo: { for: "1h" } } } } }),
    ).rejects.toThrow(/invalid propertyName 'VhostBrokerTypo'/);
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
