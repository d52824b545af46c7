// deploy/vhost-broker's monitors rendered by `helm template`: the ServiceMonitor authenticates with
// `authorization` from a Secret (the chart's scraper account's token, or one the values name) rather than
// the deprecated bearerTokenFile, which stays an opt-in; the PodMonitor takes the same endpoint; interval,
// scrapeTimeout and relabelings reach it. On the API server, the token Secret of the chart's scraper
// account passes what the operator's /metrics filter asks (a TokenReview, then a SubjectAccessReview
// for get /metrics) through the metrics-reader ClusterRole, and nothing more.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applyManifest,
  manifestObjects,
  renderChart,
  type RenderedObject,
} from "../../harness/charts/helm.ts";
import { localEnv } from "../../harness/world/env.ts";
import { eventually, freshNamespace, testCluster, type TestCluster } from "../../harness/world/kube.ts";

const render = async (values: Record<string, unknown>, namespace = "vb-system") =>
  manifestObjects(
    await renderChart("vhost-broker", {
      release: "vb",
      namespace,
      values: { settings: { "openbao-address": "http://127.0.0.1:28200" }, ...values },
    }),
  );
const ofKind = (objects: RenderedObject[], kind: string) => objects.filter((o) => o.kind === kind);
type Endpoint = Record<string, unknown>;
const endpointOf = (objects: RenderedObject[], kind: "ServiceMonitor" | "PodMonitor") => {
  const spec = ofKind(objects, kind)[0]?.["spec"] as {
    endpoints?: Endpoint[];
    podMetricsEndpoints?: Endpoint[];
  };
  return (spec.endpoints ?? spec.podMetricsEndpoints)?.[0];
};
const monitor = (serviceMonitor: Record<string, unknown> = {}, more: Record<string, unknown> = {}) => ({
  metrics: { serviceMonitor: { enabled: true, ...serviceMonitor }, ...more },
});
const scraperName = "vb-vhost-broker-metrics-scraper";

describe("the ServiceMonitor", () => {
  it("authenticates with the chart's scraper account's token Secret, not a token file", async () => {
    const objects = await render(monitor());
    expect(endpointOf(objects, "ServiceMonitor")).toEqual({
      port: "metrics",
      path: "/metrics",
      interval: "30s",
      scheme: "https",
      authorization: { type: "Bearer", credentials: { name: scraperName, key: "token" } },
      tlsConfig: { insecureSkipVerify: true },
    });
    const [account] = ofKind(objects, "ServiceAccount").filter((a) => a.metadata.name === scraperName);
    expect(account).toBeDefined();
    const [secret] = ofKind(objects, "Secret");
    expect(secret).toMatchObject({
      type: "kubernetes.io/service-account-token",
      metadata: {
        name: scraperName,
        namespace: "vb-system",
        annotations: { "kubernetes.io/service-account.name": scraperName },
      },
    });
    const binding = ofKind(objects, "ClusterRoleBinding").find((b) => b.metadata.name === scraperName);
    expect(binding).toMatchObject({
      roleRef: { kind: "ClusterRole", name: "vb-metrics-reader" },
      subjects: [{ kind: "ServiceAccount", name: scraperName, namespace: "vb-system" }],
    });
  });

  it("takes a Secret the values name instead, and makes no account then", async () => {
    const objects = await render(monitor({ tokenSecret: { name: "prometheus-token", key: "jwt" } }));
    expect(endpointOf(objects, "ServiceMonitor")?.["authorization"]).toEqual({
      type: "Bearer",
      credentials: { name: "prometheus-token", key: "jwt" },
    });
    expect(objects.filter((o) => o.metadata.name === scraperName)).toEqual([]);
  });

  it("keeps bearerTokenFile as an opt-in, without the scraper account", async () => {
    const objects = await render(monitor({ bearerTokenFile: true }));
    const endpoint = endpointOf(objects, "ServiceMonitor");
    expect(endpoint?.["bearerTokenFile"]).toBe("/var/run/secrets/kubernetes.io/serviceaccount/token");
    expect(endpoint?.["authorization"]).toBeUndefined();
    expect(objects.filter((o) => o.metadata.name === scraperName)).toEqual([]);
  });

  it("scrapes plain HTTP without credentials when metrics.secure is false", async () => {
    const objects = await render(monitor({}, { secure: false }));
    expect(endpointOf(objects, "ServiceMonitor")).toEqual({
      port: "metrics",
      path: "/metrics",
      interval: "30s",
    });
    expect(objects.filter((o) => o.metadata.name === scraperName)).toEqual([]);
  });

  it("passes scrapeTimeout and the relabelings", async () => {
    const relabelings = [
      { action: "replace", sourceLabels: ["__meta_kubernetes_pod_node_name"], targetLabel: "node" },
    ];
    const metricRelabelings = [{ action: "drop", sourceLabels: ["__name__"], regex: "nodejs_gc_.*" }];
    const endpoint = endpointOf(
      await render(monitor({ interval: "1m", scrapeTimeout: "20s", relabelings, metricRelabelings })),
      "ServiceMonitor",
    );
    expect(endpoint).toMatchObject({ interval: "1m", scrapeTimeout: "20s", relabelings, metricRelabelings });
  });

  it("binds no scraper with rbac.create=false (the account and its Secret stay, for your binding)", async () => {
    const objects = await render({ ...monitor(), rbac: { create: false } });
    expect(ofKind(objects, "ClusterRoleBinding")).toEqual([]);
    expect(objects.filter((o) => o.metadata.name === scraperName).map((o) => o.kind)).toEqual([
      "ServiceAccount",
      "Secret",
    ]);
  });
});

describe("the PodMonitor", () => {
  it("scrapes the pods with the same endpoint, instead of the ServiceMonitor", async () => {
    const objects = await render({
      metrics: {
        podMonitor: { enabled: true, labels: { release: "prometheus" } },
        serviceMonitor: { scrapeTimeout: "5s" },
      },
    });
    expect(ofKind(objects, "ServiceMonitor")).toEqual([]);
    const [podMonitor] = ofKind(objects, "PodMonitor");
    expect(podMonitor?.metadata.labels).toMatchObject({ release: "prometheus" });
    const selector = (podMonitor?.["spec"] as { selector: { matchLabels: Record<string, string> } }).selector;
    const deployment = ofKind(objects, "Deployment")[0]?.["spec"] as k8s.V1DeploymentSpec;
    for (const [key, value] of Object.entries(selector.matchLabels))
      expect(deployment.template.metadata?.labels?.[key]).toBe(value);
    expect(endpointOf(objects, "PodMonitor")).toEqual({
      port: "metrics",
      path: "/metrics",
      interval: "30s",
      scrapeTimeout: "5s",
      scheme: "https",
      authorization: { type: "Bearer", credentials: { name: scraperName, key: "token" } },
      tlsConfig: { insecureSkipVerify: true },
    });
  });

  it("is refused beside the ServiceMonitor, and with bearerTokenFile, which a PodMonitor has not", async () => {
    await expect(
      render({ metrics: { podMonitor: { enabled: true }, serviceMonitor: { enabled: true } } }),
    ).rejects.toThrow(/choose one/);
    await expect(
      render({ metrics: { podMonitor: { enabled: true }, serviceMonitor: { bearerTokenFile: true } } }),
    ).rejects.toThrow(/a PodMonitor has no bearerTokenFile/);
  });
});

describe("the scraper account's token on the API server", () => {
  let cluster: TestCluster;
  let namespace: string;
  let authn: k8s.AuthenticationV1Api;
  let authz: k8s.AuthorizationV1Api;

  beforeAll(async () => {
    cluster = testCluster("management");
    namespace = await freshNamespace(cluster, "vb-scraper");
    authn = cluster.config.makeApiClient(k8s.AuthenticationV1Api);
    authz = cluster.config.makeApiClient(k8s.AuthorizationV1Api);
  });
  afterAll(async () => {
    const rbac = cluster?.config.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac
      ?.deleteClusterRoleBinding({ name: `${namespace}-vhost-broker-metrics-scraper` })
      .catch(() => undefined);
    await rbac?.deleteClusterRole({ name: `${namespace}-metrics-reader` }).catch(() => undefined);
    await cluster?.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it("is issued into the Secret, and may get /metrics and nothing else", async () => {
    // The release is named after the namespace, so that its cluster-wide names are this test's own.
    const objects = manifestObjects(
      await renderChart("vhost-broker", {
        release: namespace,
        namespace,
        values: {
          settings: { "openbao-address": "http://127.0.0.1:28200" },
          metrics: { serviceMonitor: { enabled: true } },
        },
      }),
    ).filter(
      (o) =>
        o.metadata.name.endsWith("-metrics-scraper") || o.metadata.name === `${namespace}-metrics-reader`,
    );
    expect(objects.map((o) => o.kind).sort()).toEqual([
      "ClusterRole",
      "ClusterRoleBinding",
      "Secret",
      "ServiceAccount",
    ]);
    const { KUBECTL, KUBECONFIG } = localEnv();
    await applyManifest(KUBECTL, KUBECONFIG, objects.map((o) => JSON.stringify(o)).join("\n---\n"));
    const account = `${namespace}-vhost-broker-metrics-scraper`;
    const token = await eventually(`a token in the Secret ${namespace}/${account}`, async () => {
      const secret = await cluster.core.readNamespacedSecret({ name: account, namespace });
      const data = secret.data?.["token"];
      return data ? Buffer.from(data, "base64").toString("utf8") : undefined;
    });
    const review = await authn.createTokenReview({ body: { spec: { token } } });
    expect(review.status?.authenticated).toBe(true);
    const user = review.status?.user?.username ?? "";
    expect(user).toBe(`system:serviceaccount:${namespace}:${account}`);
    const may = async (attributes: Partial<k8s.V1SubjectAccessReviewSpec>) =>
      (
        await authz.createSubjectAccessReview({
          body: { spec: { user, groups: review.status?.user?.groups ?? [], ...attributes } },
        })
      ).status?.allowed === true;
    expect(await may({ nonResourceAttributes: { path: "/metrics", verb: "get" } })).toBe(true);
    expect(await may({ resourceAttributes: { resource: "secrets", verb: "list", namespace } })).toBe(false);
    expect(await may({ nonResourceAttributes: { path: "/healthz", verb: "post" } })).toBe(false);
  });
});
