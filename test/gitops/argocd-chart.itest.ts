// The Argo CD health check as the chart renders it (argocd.healthCheck.enabled): a ConfigMap whose keys
// are docs/gitops.md's argocd-cm snippet, key for key and byte for byte, so that the chart, the docs and
// files/argocd-health.lua (the check test/gitops/argocd-health.itest.ts runs) are one check.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as yaml from "yaml";
import { manifestObjects, renderChart } from "../../harness/charts/helm.ts";
import { orderKindRefs } from "../../src/operator/order-kinds.ts";

const file = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const render = async (values: Record<string, unknown>) =>
  manifestObjects(
    await renderChart("vhost-broker", {
      release: "vhost-broker",
      namespace: "vhost-broker-system",
      values: { settings: { "openbao-address": "http://127.0.0.1:28200" }, ...values },
    }),
  ).filter((o) => o.kind === "ConfigMap" && o.metadata.name.endsWith("-argocd-health"));

/** The data of docs/gitops.md's argocd-cm. */
function documented(): Record<string, string> {
  const blocks = [...file("docs/gitops.md").matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  const configMap = blocks
    .map(
      (b) => yaml.parse(b) as { kind?: string; metadata?: { name?: string }; data?: Record<string, string> },
    )
    .find((o) => o?.kind === "ConfigMap" && o.metadata?.name === "argocd-cm");
  return configMap?.data ?? {};
}

describe("argocd.healthCheck", () => {
  it("renders nothing by default", async () => {
    expect(await render({})).toEqual([]);
  });

  it("renders docs/gitops.md's argocd-cm keys, the chart's file under each order kind", async () => {
    const [configMap] = await render({ argocd: { healthCheck: { enabled: true, namespace: "argocd" } } });
    expect(configMap?.metadata).toMatchObject({ name: "vhost-broker-argocd-health", namespace: "argocd" });
    const data = configMap?.["data"] as Record<string, string>;
    expect(Object.keys(data).sort()).toEqual(
      orderKindRefs.map((k) => `resource.customizations.health.${k.group}_${k.kind}`).sort(),
    );
    expect(data).toEqual(documented());
    for (const script of Object.values(data))
      expect(script).toBe(file("deploy/vhost-broker/files/argocd-health.lua"));
  });

  it("goes to the release namespace unless told otherwise", async () => {
    const [configMap] = await render({ argocd: { healthCheck: { enabled: true } } });
    expect(configMap?.metadata.namespace).toBe("vhost-broker-system");
  });

  it("is what docs/gitops.md's merge command reads", () => {
    const page = file("docs/gitops.md");
    expect(page).toContain("get configmap vhost-broker-argocd-health -o jsonpath='{.data}'");
    expect(file("deploy/vhost-broker/templates/NOTES.txt")).toContain("-argocd-health");
  });
});
