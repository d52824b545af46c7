// The Grafana dashboard as deploy/vhost-broker renders it: a ConfigMap with the sidecar's conventional
// label grafana_dashboard: "1" behind metrics.grafanaDashboard.enabled (off by default), carrying
// dashboards/vhost-broker.json unchanged, which the real kube-apiserver admits (server-side dry run).
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { localEnv } from "../../harness/world/env.ts";
import { manifestObjects, renderChart } from "../../harness/charts/helm.ts";

const run = promisify(execFile);
const required = { "settings.openbao-address": "http://127.0.0.1:28200" };
const dashboard = readFileSync(
  new URL("../../deploy/vhost-broker/dashboards/vhost-broker.json", import.meta.url),
  "utf8",
);
const render = (set: Record<string, string> = {}) =>
  renderChart("vhost-broker", { release: "vb", namespace: "vb-system", set: { ...required, ...set } });
const configMaps = async (set: Record<string, string> = {}) =>
  manifestObjects(await render(set)).filter((o) => o.kind === "ConfigMap");

describe("the chart's Grafana dashboard", () => {
  it("is off by default", async () => {
    expect((await configMaps()).map((c) => c.metadata.name)).not.toContain("vb-vhost-broker-dashboard");
  });

  it('is a ConfigMap labelled grafana_dashboard: "1" with the dashboard\'s JSON, where it is asked for', async () => {
    const [map] = (
      await configMaps({
        "metrics.grafanaDashboard.enabled": "true",
        "metrics.grafanaDashboard.namespace": "monitoring",
        "metrics.grafanaDashboard.annotations.grafana_folder": "c5c3",
        "metrics.grafanaDashboard.labels.team": "platform",
      })
    ).filter((c) => c.metadata.name === "vb-vhost-broker-dashboard");
    expect(map?.metadata.namespace).toBe("monitoring");
    expect(map?.metadata.labels).toMatchObject({
      grafana_dashboard: "1",
      team: "platform",
      "app.kubernetes.io/instance": "vb",
    });
    expect(map?.metadata.annotations).toEqual({ grafana_folder: "c5c3" });
    const data = (map?.["data"] ?? {}) as Record<string, string>;
    expect(Object.keys(data)).toEqual(["vhost-broker.json"]);
    expect(data["vhost-broker.json"]).toBe(dashboard.trimEnd());
    expect(JSON.parse(data["vhost-broker.json"] ?? "")).toEqual(JSON.parse(dashboard));
  });

  it("is admitted by the API server", async () => {
    const manifest = await render({ "metrics.grafanaDashboard.enabled": "true" });
    const { KUBECTL, KUBECONFIG } = localEnv();
    const child = run(KUBECTL, [
      `--kubeconfig=${KUBECONFIG}`,
      "apply",
      "--dry-run=server",
      "-n",
      "default",
      "-f",
      "-",
    ]);
    child.child.stdin?.end(
      manifestObjects(manifest)
        .filter((o) => o.kind === "ConfigMap" && o.metadata.name === "vb-vhost-broker-dashboard")
        .map((o) => JSON.stringify({ ...o, metadata: { ...o.metadata, namespace: "default" } }))
        .join("\n"),
    );
    const { stdout } = await child;
    expect(stdout).toContain("configmap/vb-vhost-broker-dashboard created (server dry run)");
  });
});
