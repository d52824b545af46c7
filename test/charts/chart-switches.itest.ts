// deploy/vhost-broker rendered by `helm template`: the switch that leaves out the cut-down ControlPlane
// CRD, and the selectors that must keep finding the pods whatever the chart's names are overridden to.
import { describe, expect, it } from "vitest";
import { manifestObjects, renderChart, type RenderedObject } from "../../harness/charts/helm.ts";

const render = async (set: Record<string, string> = {}) =>
  manifestObjects(
    await renderChart("vhost-broker", {
      release: "vb",
      namespace: "vb-system",
      set: { "settings.openbao-address": "http://127.0.0.1:28200", ...set },
    }),
  );
const ofKind = (objects: RenderedObject[], kind: string) => objects.filter((o) => o.kind === kind);
const crdNames = (objects: RenderedObject[]) =>
  ofKind(objects, "CustomResourceDefinition")
    .map((c) => c.metadata.name)
    .sort();

/** Whether every label of the selector is on the object's labels. */
const selects = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  !!selector &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

describe("crds.controlPlane", () => {
  it("installs the cut-down controlplanes.c5c3.io CRD by default, as before the switch", async () => {
    const names = crdNames(await render());
    expect(names).toContain("controlplanes.c5c3.io");
    expect(names).toHaveLength(10);
  });

  it("false leaves out only that CRD: the order kinds and the rabbitmq.com kinds stay", async () => {
    const all = crdNames(await render());
    const without = crdNames(await render({ "crds.controlPlane": "false" }));
    expect(without).toEqual(all.filter((n) => n !== "controlplanes.c5c3.io"));
    expect(without).toEqual(expect.arrayContaining(["rabbitmqvhosts.c5c3.io", "mariadbdatabases.c5c3.io"]));
  });

  it("is refused when it is not a boolean", async () => {
    await expect(render({ "crds.controlPlane": "no" })).rejects.toThrow(/controlPlane/);
  });
});

describe.each<{ overrides: Record<string, string> }>([
  { overrides: {} },
  { overrides: { nameOverride: "messaging-broker" } },
  { overrides: { fullnameOverride: "platform-vhosts" } },
  { overrides: { nameOverride: "messaging-broker", fullnameOverride: "platform-vhosts" } },
])("the selectors with $overrides", ({ overrides }) => {
  const objects = render({
    ...overrides,
    "metrics.serviceMonitor.enabled": "true",
    "metrics.prometheusRule.enabled": "true",
  });
  const deployment = async () => {
    const [d] = ofKind(await objects, "Deployment");
    return d?.["spec"] as {
      selector: { matchLabels: Record<string, string> };
      template: { metadata: { labels: Record<string, string> } };
    };
  };

  it("the metrics Service selects the Deployment's pods", async () => {
    const [service] = ofKind(await objects, "Service");
    const { template, selector } = await deployment();
    const serviceSelector = (service?.["spec"] as { selector: Record<string, string> }).selector;
    expect(selects(serviceSelector, template.metadata.labels), JSON.stringify(serviceSelector)).toBe(true);
    expect(selects(selector.matchLabels, template.metadata.labels)).toBe(true);
  });

  it("the ServiceMonitor selects the Service, and the PodDisruptionBudget the pods", async () => {
    const [service] = ofKind(await objects, "Service");
    const [monitor] = ofKind(await objects, "ServiceMonitor");
    const [pdb] = ofKind(await objects, "PodDisruptionBudget");
    const { template } = await deployment();
    const monitorSelector = (monitor?.["spec"] as { selector: { matchLabels: Record<string, string> } })
      .selector;
    expect(selects(monitorSelector.matchLabels, service?.metadata.labels)).toBe(true);
    const pdbSelector = (pdb?.["spec"] as { selector: { matchLabels: Record<string, string> } }).selector;
    expect(selects(pdbSelector.matchLabels, template.metadata.labels)).toBe(true);
  });

  it("the alerts name the metrics Service as their job", async () => {
    const [service] = ofKind(await objects, "Service");
    const [rule] = ofKind(await objects, "PrometheusRule");
    const exprs = (rule?.["spec"] as { groups: { rules: { expr: string }[] }[] }).groups.flatMap((g) =>
      g.rules.map((r) => r.expr),
    );
    for (const expr of exprs) expect(expr).toContain(`job="${service?.metadata.name}"`);
  });
});
