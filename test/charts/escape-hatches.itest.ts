// deploy/vhost-broker's escape hatches rendered by `helm template`: strategy, revisionHistoryLimit, the
// probes' timings, extra volumes and mounts, extraObjects through tpl, the NetworkPolicy and rbac.create.
// Left at their defaults they add nothing to what the chart rendered before them; set, each lands where
// it should, and the API server admits the whole manifest (server-side dry run).
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  dryRunManifest,
  manifestObjects,
  renderChart,
  type RenderedObject,
} from "../../harness/charts/helm.ts";
import { localEnv } from "../../harness/world/env.ts";
import { freshNamespace, testCluster, type TestCluster } from "../../harness/world/kube.ts";

const required = { settings: { "openbao-address": "http://127.0.0.1:28200" } };
const manifest = (values: Record<string, unknown> = {}, namespace = "vb-system") =>
  renderChart("vhost-broker", { release: "vb", namespace, values: { ...required, ...values } });
const render = async (values: Record<string, unknown> = {}) => manifestObjects(await manifest(values));
const ofKind = (objects: RenderedObject[], kind: string) => objects.filter((o) => o.kind === kind);
const deploymentSpec = (objects: RenderedObject[]) =>
  ofKind(objects, "Deployment")[0]?.["spec"] as k8s.V1DeploymentSpec;
const container = (objects: RenderedObject[]) => deploymentSpec(objects).template.spec?.containers[0];

const hatches = {
  strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
  revisionHistoryLimit: 3,
  livenessProbe: { initialDelaySeconds: 5, periodSeconds: 20, timeoutSeconds: 5, failureThreshold: 6 },
  readinessProbe: { periodSeconds: 5, failureThreshold: 2 },
  extraVolumes: [{ name: "plugin-ca", configMap: { name: "plugin-ca" } }],
  extraVolumeMounts: [{ name: "plugin-ca", mountPath: "/etc/plugin-ca", readOnly: true }],
  extraObjects: [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "{{ .Release.Name }}-extra", namespace: "{{ .Release.Namespace }}" },
      data: { release: "{{ .Release.Name }}" },
    },
    "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {{ .Release.Name }}-plugin\n",
  ],
  networkPolicy: { enabled: true },
};

describe("the escape hatches at their defaults", () => {
  it("render nothing of their own", async () => {
    const objects = await render();
    const spec = deploymentSpec(objects);
    expect(spec.strategy).toBeUndefined();
    expect(spec.revisionHistoryLimit).toBeUndefined();
    expect(container(objects)?.livenessProbe).toEqual({ httpGet: { path: "/healthz", port: "probes" } });
    expect(container(objects)?.readinessProbe).toEqual({ httpGet: { path: "/readyz", port: "probes" } });
    expect(spec.template.spec?.volumes?.map((v) => v.name)).toEqual(["tmp"]);
    expect(container(objects)?.volumeMounts?.map((m) => m.name)).toEqual(["tmp"]);
    expect(ofKind(objects, "NetworkPolicy")).toEqual([]);
    expect(ofKind(objects, "ConfigMap")).toEqual([]);
    expect(
      objects
        .map((o) => o.kind)
        .filter((k) => k.endsWith("Role") || k.endsWith("RoleBinding"))
        .sort(),
    ).toEqual([
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRole",
      "ClusterRoleBinding",
      "Role",
      // The helm test's account (templates/tests/check.yaml).
      "Role",
      "RoleBinding",
      "RoleBinding",
    ]);
  });
});

describe("the escape hatches set", () => {
  it("give the Deployment its strategy, history and probe timings", async () => {
    const objects = await render(hatches);
    const spec = deploymentSpec(objects);
    expect(spec.strategy).toEqual(hatches.strategy);
    expect(spec.revisionHistoryLimit).toBe(3);
    expect(container(objects)?.livenessProbe).toEqual({
      httpGet: { path: "/healthz", port: "probes" },
      ...hatches.livenessProbe,
    });
    expect(container(objects)?.readinessProbe).toEqual({
      httpGet: { path: "/readyz", port: "probes" },
      ...hatches.readinessProbe,
    });
    expect(deploymentSpec(await render({ revisionHistoryLimit: 0 })).revisionHistoryLimit).toBe(0);
  });

  it("add the extra volumes and mounts after the chart's own", async () => {
    const objects = await render({ ...hatches, gatekeeper: { pluginsConfigMap: "plugins" } });
    expect(deploymentSpec(objects).template.spec?.volumes?.map((v) => v.name)).toEqual([
      "tmp",
      "gatekeeper-plugins",
      "plugin-ca",
    ]);
    expect(container(objects)?.volumeMounts?.at(-1)).toEqual(hatches.extraVolumeMounts[0]);
  });

  it("render extraObjects through tpl, as maps and as text", async () => {
    const objects = await render(hatches);
    expect(ofKind(objects, "ConfigMap")).toEqual([
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "vb-extra", namespace: "vb-system" },
        data: { release: "vb" },
      },
    ]);
    expect(ofKind(objects, "ServiceAccount").map((s) => s.metadata.name)).toContain("vb-plugin");
  });

  it("refuse a probe timing Kubernetes has no such field for, and a zero period", async () => {
    await expect(render({ livenessProbe: { periodSecond: 5 } })).rejects.toThrow(/periodSecond/);
    await expect(render({ readinessProbe: { periodSeconds: 0 } })).rejects.toThrow(/periodSeconds/);
  });
});

describe("networkPolicy", () => {
  type Policy = k8s.V1NetworkPolicySpec;
  const policy = async (values: Record<string, unknown>) =>
    ofKind(await render({ networkPolicy: { enabled: true, ...values } }), "NetworkPolicy")[0]?.[
      "spec"
    ] as Policy;
  const ports = (rules: { ports?: k8s.V1NetworkPolicyPort[] }[] | undefined) =>
    (rules ?? []).map((r) => (r.ports ?? []).map((p) => `${p.port}/${p.protocol}`));

  it("selects the operator's pods, lets in the metrics and probe ports, and lets out what it talks to", async () => {
    const objects = await render({ networkPolicy: { enabled: true } });
    const [np] = ofKind(objects, "NetworkPolicy");
    const spec = np?.["spec"] as Policy;
    const labels = deploymentSpec(objects).template.metadata?.labels ?? {};
    for (const [key, value] of Object.entries(spec.podSelector?.matchLabels ?? {}))
      expect(labels[key]).toBe(value);
    expect(spec.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(spec.ingress).toEqual([
      { ports: [{ port: "metrics", protocol: "TCP" }] },
      { ports: [{ port: "probes", protocol: "TCP" }] },
    ]);
    // The named ports are the container's.
    expect(container(objects)?.ports?.map((p) => p.name)).toEqual(["metrics", "probes"]);
    expect(ports(spec.egress)).toEqual([
      ["53/UDP", "53/TCP"],
      ["443/TCP", "6443/TCP"],
      ["15671/TCP", "15672/TCP", "5671/TCP", "5672/TCP"],
      ["8200/TCP"],
    ]);
    expect(spec.egress?.every((r) => r.to === undefined)).toBe(true);
  });

  it("adds MariaDB's port with the SQL controller or MariaDB orders only", async () => {
    const sql = ofKind(
      await render({
        networkPolicy: { enabled: true },
        settings: { ...required.settings, "sql-controller": true, "mariadb-host": "mariadb.openstack.svc" },
      }),
      "NetworkPolicy",
    )[0]?.["spec"] as Policy;
    expect(ports(sql.egress).at(-1)).toEqual(["3306/TCP"]);
    const orders = ofKind(
      await render({
        networkPolicy: { enabled: true },
        settings: { ...required.settings, "mariadb-orders": "true" },
      }),
      "NetworkPolicy",
    )[0]?.["spec"] as Policy;
    expect(ports(orders.egress).at(-1)).toEqual(["3306/TCP"]);
  });

  it("takes peers and ports from the values, drops a rule without ports, and appends extra rules", async () => {
    const monitoring = {
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } },
    };
    const openbao = [{ ipBlock: { cidr: "10.20.0.0/16" } }];
    const extra = { to: [{ ipBlock: { cidr: "192.0.2.10/32" } }], ports: [{ port: 9443, protocol: "TCP" }] };
    const spec = await policy({
      ingress: { metricsFrom: [monitoring] },
      egress: { openbao: { ports: [8200, 8201], to: openbao }, rabbitmq: { ports: [] }, extra: [extra] },
    });
    expect(spec.ingress?.[0]).toEqual({ ports: [{ port: "metrics", protocol: "TCP" }], from: [monitoring] });
    expect(spec.ingress?.[1]).toEqual({ ports: [{ port: "probes", protocol: "TCP" }] });
    expect(ports(spec.egress)).toEqual([
      ["53/UDP", "53/TCP"],
      ["443/TCP", "6443/TCP"],
      ["8200/TCP", "8201/TCP"],
      ["9443/TCP"],
    ]);
    expect(spec.egress?.[2]?.to).toEqual(openbao);
    expect(spec.egress?.[3]).toEqual(extra);
  });
});

describe("rbac.create=false", () => {
  it("renders no Role, ClusterRole or binding, and the pods still run as the ServiceAccount", async () => {
    const objects = await render({
      rbac: { create: false, secretNamespaces: ["tenant-a"] },
      metrics: { serviceMonitor: { enabled: false } },
    });
    expect(objects.filter((o) => o.apiVersion.startsWith("rbac.authorization.k8s.io/"))).toEqual([]);
    const [account] = ofKind(objects, "ServiceAccount");
    expect(account?.metadata.name).toBe("vb-vhost-broker");
    expect(deploymentSpec(objects).template.spec?.serviceAccountName).toBe("vb-vhost-broker");
    // The operator is still told where its Secrets are.
    expect(container(objects)?.env).toContainEqual({
      name: "VHOST_BROKER_SECRET_NAMESPACES",
      value: "tenant-a",
    });
    const named = await render({
      rbac: { create: false },
      serviceAccount: { create: false, name: "platform-made" },
    });
    expect(ofKind(named, "ServiceAccount")).toEqual([]);
    expect(deploymentSpec(named).template.spec?.serviceAccountName).toBe("platform-made");
  });
});

describe("the escape hatches on the API server", () => {
  let cluster: TestCluster;
  let namespace: string;

  beforeAll(async () => {
    cluster = testCluster("management");
    namespace = await freshNamespace(cluster, "vb-hatches");
  });
  afterAll(async () => {
    await cluster?.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it("admits every object rendered with all of them set (server-side dry run)", async () => {
    const { KUBECTL, KUBECONFIG } = localEnv();
    const { stdout } = await dryRunManifest(
      KUBECTL,
      KUBECONFIG,
      await manifest(
        { ...hatches, argocd: { healthCheck: { enabled: true } }, crds: { install: false } },
        namespace,
      ),
    );
    for (const object of [
      "deployment.apps/vb-vhost-broker",
      "networkpolicy.networking.k8s.io/vb-vhost-broker",
      "configmap/vb-extra",
      "serviceaccount/vb-plugin",
      "configmap/vb-vhost-broker-argocd-health",
    ])
      expect(stdout).toContain(`${object} serverside-applied (server dry run)`);
  });
});
