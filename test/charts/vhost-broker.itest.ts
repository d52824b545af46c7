// deploy/vhost-broker rendered by helm and admitted by the real kube-apiserver: the values schema stops a
// bad install, the chart's conventions hold, and its pod passes Pod Security "restricted" where a
// namespace enforces it (a Pod made from the Deployment's template, server-side dry run).
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localEnv } from "../../harness/world/env.ts";
import { freshNamespace, RESTRICTED, testCluster, type TestCluster } from "../../harness/world/kube.ts";
import {
  dryRunManifest,
  manifestObjects,
  renderChart,
  type RenderedObject,
} from "../../harness/charts/helm.ts";

const required = { "settings.openbao-address": "http://127.0.0.1:28200" };
const render = async (set: Record<string, string> = {}) =>
  manifestObjects(
    await renderChart("vhost-broker", {
      release: "vb",
      namespace: "vb-system",
      set: { ...required, ...set },
    }),
  );
const ofKind = (objects: RenderedObject[], kind: string) => objects.filter((o) => o.kind === kind);

interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: k8s.V1PodSpec;
}
const podTemplate = (objects: RenderedObject[]): PodTemplate => {
  const [deployment] = ofKind(objects, "Deployment");
  return (deployment?.["spec"] as { template: PodTemplate }).template;
};
const container = (objects: RenderedObject[]) => podTemplate(objects).spec.containers[0];
const env = (objects: RenderedObject[]) =>
  Object.fromEntries((container(objects)?.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));

describe("deploy/vhost-broker values", () => {
  it("refuses an empty openbao-address and an unknown setting at install", async () => {
    await expect(renderChart("vhost-broker", { release: "vb", namespace: "ns" })).rejects.toThrow(
      /openbao-address/,
    );
    await expect(render({ "settings.openbao-adress": "http://x" })).rejects.toThrow(
      /additional properties 'openbao-adress' not allowed/,
    );
    await expect(render({ "settings.openbao-address": "openbao:8200" })).rejects.toThrow(/https\?/);
  });

  it("mounts gatekeeper plugin files from a ConfigMap or a volume, and passes the plugin settings", async () => {
    const mounted = (objects: RenderedObject[]) => ({
      mount: container(objects)?.volumeMounts?.find((m) => m.name === "gatekeeper-plugins"),
      volume: podTemplate(objects).spec.volumes?.find((v) => v.name === "gatekeeper-plugins"),
    });
    expect(mounted(await render())).toEqual({ mount: undefined, volume: undefined });
    const fromConfigMap = await render({
      "gatekeeper.pluginsConfigMap": "platform-plugins",
      "settings.gatekeeper-custom-plugins": "order-quota\\,/etc/vhost-broker/gatekeeper-plugins/audit.mjs",
      "settings.gatekeeper-default-plugins": "",
    });
    expect(mounted(fromConfigMap)).toEqual({
      mount: {
        name: "gatekeeper-plugins",
        mountPath: "/etc/vhost-broker/gatekeeper-plugins",
        readOnly: true,
      },
      volume: { name: "gatekeeper-plugins", configMap: { name: "platform-plugins" } },
    });
    expect(env(fromConfigMap)).toMatchObject({
      VHOST_BROKER_GATEKEEPER_CUSTOM_PLUGINS: "order-quota,/etc/vhost-broker/gatekeeper-plugins/audit.mjs",
      VHOST_BROKER_GATEKEEPER_DEFAULT_PLUGINS: "",
    });
    const fromVolume = await render({
      "gatekeeper.pluginsVolume.persistentVolumeClaim.claimName": "plugins",
    });
    expect(mounted(fromVolume).volume).toEqual({
      name: "gatekeeper-plugins",
      persistentVolumeClaim: { claimName: "plugins" },
    });
  });

  it("takes the image tag from appVersion unless set, and prefers a digest", async () => {
    expect(container(await render())?.image).toBe("vhost-broker:0.1.0");
    expect(
      container(await render({ "image.registry": "registry.example", "image.tag": "1.2.3" }))?.image,
    ).toBe("registry.example/vhost-broker:1.2.3");
    const digest = `sha256:${"a".repeat(64)}`;
    expect(container(await render({ "image.digest": digest }))?.image).toBe(`vhost-broker@${digest}`);
  });

  it("passes settings as VHOST_BROKER_* and names the leader-election Lease after the release", async () => {
    const vars = env(await render({ "settings.topology-controller": "false" }));
    expect(vars).toMatchObject({
      VHOST_BROKER_OPENBAO_ADDRESS: "http://127.0.0.1:28200",
      VHOST_BROKER_TOPOLOGY_CONTROLLER: "false",
      VHOST_BROKER_LEADER_ELECTION_ID: "vb-vhost-broker",
    });
    const objects = await render();
    const role = ofKind(objects, "Role")[0];
    expect(JSON.stringify(role?.["rules"])).toContain('"resourceNames":["vb-vhost-broker"]');
  });

  it("outlasts the reconcile timeout on termination and keeps one pod through a disruption", async () => {
    const objects = await render();
    // The reconcile timeout's default is 2m (src/runtime/process/config.ts).
    expect(podTemplate(objects).spec.terminationGracePeriodSeconds).toBeGreaterThan(120);
    const [pdb] = ofKind(objects, "PodDisruptionBudget");
    expect(pdb?.["spec"]).toMatchObject({ maxUnavailable: 1 });
  });

  it("installs the rabbitmq.com CRDs only with the built-in topology controller, and keeps them", async () => {
    const names = (objects: RenderedObject[]) =>
      ofKind(objects, "CustomResourceDefinition").map((c) => c.metadata.name);
    const all = await render();
    expect(names(all)).toHaveLength(10);
    for (const crd of ofKind(all, "CustomResourceDefinition")) {
      expect(crd.metadata.annotations).toEqual({ "helm.sh/resource-policy": "keep" });
    }
    expect(names(await render({ "settings.topology-controller": "false" })).sort()).toEqual([
      "controlplanes.c5c3.io",
      "mariadbdatabases.c5c3.io",
      "rabbitmqvhosts.c5c3.io",
    ]);
    expect(names(await render({ "crds.install": "false" }))).toEqual([]);
  });

  it("with MariaDBDatabase orders: the rights on their children and on the managed MariaDB", async () => {
    const rulesOf = async (set: Record<string, string>) => {
      const [role] = ofKind(await render(set), "ClusterRole");
      return (role?.["rules"] ?? []) as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    };
    const on = await rulesOf({ "settings.mariadb-orders": "true" });
    expect(on.find((r) => r.apiGroups.includes("k8s.mariadb.com"))).toEqual({
      apiGroups: ["k8s.mariadb.com"],
      resources: ["mariadbs"],
      verbs: ["get", "list", "watch"],
    });
    expect(on.find((r) => r.apiGroups.includes("mariadb.osh.openstack.org"))?.verbs).toContain("create");
    expect(on.find((r) => r.resources.includes("mariadbdatabases/finalizers"))).toBeDefined();
    const off = await rulesOf({});
    expect(off.filter((r) => r.apiGroups.includes("mariadb.osh.openstack.org"))).toEqual([]);
    expect(env(await render({ "settings.mariadb-orders": "true" }))).toMatchObject({
      VHOST_BROKER_MARIADB_ORDERS: "true",
    });
  });

  it("with the built-in SQL controller: its CRDs, its rights, the administrator's password (a file, read again on rotation) and client certificate from Secrets", async () => {
    await expect(render({ "settings.sql-controller": "true" })).rejects.toThrow(
      /settings.mariadb-host is required when settings.sql-controller is true/,
    );
    const objects = await render({
      "settings.sql-controller": "true",
      "settings.mariadb-host": "mariadb.openstack.svc",
      "mariadb.passwordSecret.name": "mariadb-dbadmin-password",
      "mariadb.passwordSecret.key": "MYSQL_DBADMIN_PASSWORD",
      "mariadb.ca.secret": "mariadb-tls",
      "mariadb.clientCertSecret": "mariadb-client-tls",
    });
    const crds = ofKind(objects, "CustomResourceDefinition").map((c) => c.metadata.name);
    expect(crds.filter((n) => n.endsWith(".mariadb.osh.openstack.org")).sort()).toEqual([
      "connections.mariadb.osh.openstack.org",
      "databases.mariadb.osh.openstack.org",
      "grants.mariadb.osh.openstack.org",
      "users.mariadb.osh.openstack.org",
    ]);
    const [role] = ofKind(objects, "ClusterRole");
    const rules = (role?.["rules"] ?? []) as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    expect(rules.filter((r) => r.apiGroups.includes("mariadb.osh.openstack.org"))).toHaveLength(3);
    expect(env(objects)).toMatchObject({
      VHOST_BROKER_SQL_CONTROLLER: "true",
      VHOST_BROKER_MARIADB_HOST: "mariadb.openstack.svc",
      VHOST_BROKER_MARIADB_PASSWORD_FILE: "/etc/vhost-broker/mariadb-password/password",
      VHOST_BROKER_MARIADB_CA_FILE: "/etc/vhost-broker/mariadb-ca/ca.crt",
      VHOST_BROKER_MARIADB_TLS_CERT_FILE: "/etc/vhost-broker/mariadb-client-tls/tls.crt",
      VHOST_BROKER_MARIADB_TLS_KEY_FILE: "/etc/vhost-broker/mariadb-client-tls/tls.key",
    });
    expect(env(objects)).not.toHaveProperty("VHOST_BROKER_MARIADB_PASSWORD");
    const pod = podTemplate(objects).spec;
    // Mounted without subPath: the kubelet updates the file when the Secret is rotated.
    expect(pod.volumes?.find((v) => v.name === "mariadb-password")?.secret).toEqual({
      secretName: "mariadb-dbadmin-password",
      items: [{ key: "MYSQL_DBADMIN_PASSWORD", path: "password" }],
    });
    expect(pod.containers[0]?.volumeMounts).toContainEqual({
      name: "mariadb-password",
      mountPath: "/etc/vhost-broker/mariadb-password",
      readOnly: true,
    });
    expect(pod.volumes?.find((v) => v.name === "mariadb-client-tls")?.secret).toEqual({
      secretName: "mariadb-client-tls",
      items: [
        { key: "tls.crt", path: "tls.crt" },
        { key: "tls.key", path: "tls.key" },
      ],
    });
    expect(pod.containers[0]?.volumeMounts).toContainEqual({
      name: "mariadb-client-tls",
      mountPath: "/etc/vhost-broker/mariadb-client-tls",
      readOnly: true,
    });
    const without = await render();
    expect(ofKind(without, "CustomResourceDefinition").map((c) => c.metadata.name)).not.toContain(
      "databases.mariadb.osh.openstack.org",
    );
    const [plainRole] = ofKind(without, "ClusterRole");
    expect(JSON.stringify(plainRole)).not.toContain("mariadb.osh.openstack.org");
  });

  it("aggregates order rights into admin, edit and view", async () => {
    const roles = ofKind(await render(), "ClusterRole");
    const aggregated = (label: string) =>
      roles
        .filter((r) => r.metadata.labels?.[`rbac.authorization.k8s.io/${label}`] === "true")
        .map((r) => r.metadata.name);
    expect(aggregated("aggregate-to-admin")).toEqual(["vb-vhost-broker-edit"]);
    expect(aggregated("aggregate-to-edit")).toEqual(["vb-vhost-broker-edit"]);
    expect(aggregated("aggregate-to-view")).toEqual(["vb-vhost-broker-view"]);
  });

  it("mounts the CAs and a projected OpenBao token with its audience", async () => {
    const objects = await render({
      "settings.openbao-auth": "kubernetes",
      "settings.openbao-role": "vhost-broker",
      "brokerCA.configMap": "broker-ca",
      "openbao.ca.secret": "openbao-ca",
    });
    const volumes = podTemplate(objects).spec.volumes ?? [];
    expect(volumes.find((v) => v.name === "openbao-token")?.projected?.sources).toEqual([
      { serviceAccountToken: { path: "token", audience: "openbao", expirationSeconds: 3600 } },
    ]);
    expect(volumes.find((v) => v.name === "broker-ca")?.configMap?.name).toBe("broker-ca");
    expect(volumes.find((v) => v.name === "openbao-ca")?.secret?.secretName).toBe("openbao-ca");
    expect(env(objects)).toMatchObject({
      VHOST_BROKER_OPENBAO_TOKEN_FILE: "/var/run/secrets/openbao/token",
      VHOST_BROKER_BROKER_CA_FILE: "/etc/vhost-broker/broker-ca/ca.crt",
      NODE_EXTRA_CA_CERTS: "/etc/vhost-broker/openbao-ca/ca.crt",
    });
  });
});

describe("deploy/vhost-broker under Pod Security restricted", () => {
  let cluster: TestCluster;
  let namespace: string;

  beforeAll(async () => {
    cluster = testCluster("management");
    namespace = await freshNamespace(cluster, "vb-restricted", RESTRICTED);
  });
  afterAll(async () => {
    await cluster?.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  const createPod = async (template: PodTemplate) =>
    cluster.core.createNamespacedPod({
      namespace,
      dryRun: "All",
      body: { metadata: { name: "vb-pod", labels: template.metadata.labels }, spec: template.spec },
    });

  it("admits a Pod made from the Deployment's template", async () => {
    const objects = await render({
      "settings.openbao-auth": "kubernetes",
      "brokerCA.secret": "ca",
      // The administrator's password Secret, mounted as a file.
      "settings.sql-controller": "true",
      "settings.mariadb-host": "mariadb.openstack.svc",
      "mariadb.passwordSecret.name": "mariadb-dbadmin-password",
    });
    const pod = await createPod(podTemplate(objects));
    expect(pod.spec?.securityContext?.runAsUser).toBe(65532);
  });

  it("refuses it without the seccomp profile, as the chart was before", async () => {
    const template = podTemplate(await render());
    delete template.spec.securityContext?.seccompProfile;
    await expect(createPod(template)).rejects.toThrow(
      /forbidden: violates PodSecurity .{1,8}restricted:latest.{1,8}: seccompProfile/,
    );
  });

  it("applies every rendered object server-side (dry run) in that namespace", async () => {
    const manifest = await renderChart("vhost-broker", { release: "vb", namespace, set: required });
    const { KUBECTL, KUBECONFIG } = localEnv();
    const { stdout, stderr } = await dryRunManifest(KUBECTL, KUBECONFIG, manifest);
    expect(stdout).toContain(`deployment.apps/vb-vhost-broker serverside-applied (server dry run)`);
    expect(stderr).not.toMatch(/would violate PodSecurity/);
  });
});
