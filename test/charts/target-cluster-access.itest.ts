// deploy/target-cluster-access rendered by helm: one Role and RoleBinding per assigned namespace with
// exactly the verbs the operator needs on a target cluster (issue 8), nothing cluster-wide, and a
// ServiceAccount with a long-lived token Secret for the kubeconfig the management cluster registers.
// An integration test only because helm is built by the local environment's `up`.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as yaml from "yaml";
import { manifestObjects, renderChart, type RenderedObject } from "../../harness/charts/helm.ts";

// The list: Secrets (every verb), orders get/list/watch/update/patch, their /status and /finalizers;
// and events about the orders (issue 13).
const allowed: Record<string, string[]> = {
  "/secrets": ["create", "delete", "get", "list", "patch", "update", "watch"],
  // The sweep of a superseded user waits for the pods that read the delivered Secret to restart.
  "/pods": ["list"],
  "c5c3.io/rabbitmqvhosts": ["get", "list", "patch", "update", "watch"],
  "c5c3.io/rabbitmqvhosts/status": ["get", "patch", "update"],
  "c5c3.io/rabbitmqvhosts/finalizers": ["update"],
  "c5c3.io/mariadbdatabases": ["get", "list", "patch", "update", "watch"],
  "c5c3.io/mariadbdatabases/status": ["get", "patch", "update"],
  "c5c3.io/mariadbdatabases/finalizers": ["update"],
  "events.k8s.io/events": ["create", "patch"],
};

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

const render = async (set: Record<string, string>, includeCrds = false) =>
  manifestObjects(
    await renderChart("target-cluster-access", {
      release: "access",
      namespace: "vb-access",
      set,
      includeCrds,
    }),
  );
const ofKind = (objects: RenderedObject[], kind: string) => objects.filter((o) => o.kind === kind);

/** Every (group/resource → verbs) a Role grants, merged over its rules. */
function grants(role: RenderedObject): Record<string, string[]> {
  const merged: Record<string, Set<string>> = {};
  for (const rule of role["rules"] as Rule[]) {
    expect(rule.resourceNames).toBeUndefined();
    for (const group of rule.apiGroups) {
      for (const resource of rule.resources) {
        const set = (merged[`${group}/${resource}`] ??= new Set());
        for (const verb of rule.verbs) set.add(verb);
      }
    }
  }
  return Object.fromEntries(Object.entries(merged).map(([k, v]) => [k, [...v].sort()]));
}

describe("deploy/target-cluster-access", () => {
  it("renders a Role and a RoleBinding in each assigned namespace and nothing cluster-wide", async () => {
    const objects = await render({ assignedNamespaces: "{tenant-a,tenant-b}" });
    expect(objects.map((o) => o.kind).sort()).toEqual([
      "Role",
      "Role",
      "RoleBinding",
      "RoleBinding",
      "Secret",
      "ServiceAccount",
    ]);
    const roles = ofKind(objects, "Role");
    expect(roles.map((r) => r.metadata.namespace).sort()).toEqual(["tenant-a", "tenant-b"]);
    for (const binding of ofKind(objects, "RoleBinding")) {
      const role = roles.find((r) => r.metadata.namespace === binding.metadata.namespace);
      expect(binding["roleRef"]).toEqual({
        apiGroup: "rbac.authorization.k8s.io",
        kind: "Role",
        name: role?.metadata.name,
      });
      expect(binding["subjects"]).toEqual([
        { kind: "ServiceAccount", name: "vhost-broker", namespace: "vb-access" },
      ]);
    }
  });

  it("grants exactly these verbs: Secrets, pods (list), orders, their status and finalizers, events, nothing else", async () => {
    const [role] = ofKind(await render({ assignedNamespaces: "{tenant-a}" }), "Role");
    if (!role) throw new Error("no Role rendered");
    expect(grants(role)).toEqual(allowed);
  });

  it("renders a ServiceAccount and its long-lived token Secret in the release namespace", async () => {
    const objects = await render({ assignedNamespaces: "{tenant-a}", "serviceAccount.name": "broker" });
    const [account] = ofKind(objects, "ServiceAccount");
    const [token] = ofKind(objects, "Secret");
    expect(account?.metadata).toMatchObject({ name: "broker", namespace: "vb-access" });
    expect(token?.metadata).toMatchObject({
      name: "broker-token",
      namespace: "vb-access",
      annotations: { "kubernetes.io/service-account.name": "broker" },
    });
    expect(token?.["type"]).toBe("kubernetes.io/service-account-token");
    // The token controller fills it in; the chart carries no credential.
    expect(token?.["data"]).toBeUndefined();
    expect(token?.["stringData"]).toBeUndefined();
    const [binding] = ofKind(objects, "RoleBinding");
    expect(binding?.["subjects"]).toEqual([
      { kind: "ServiceAccount", name: "broker", namespace: "vb-access" },
    ]);
  });

  it("renders no Role without assigned namespaces, and the namespaces only when asked to", async () => {
    const none = await render({});
    expect(none.map((o) => o.kind).sort()).toEqual(["Secret", "ServiceAccount"]);
    const created = await render({ assignedNamespaces: "{tenant-a}", createNamespaces: "true" });
    expect(ofKind(created, "Namespace").map((n) => n.metadata.name)).toEqual(["tenant-a"]);
    // A tenant's namespace outlives the chart: helm uninstall keeps it.
    expect(ofKind(created, "Namespace")[0]?.metadata).toMatchObject({
      annotations: { "helm.sh/resource-policy": "keep" },
    });
  });

  it("names its Roles after the release", async () => {
    const objects = await render({ assignedNamespaces: "{tenant-a}" });
    expect(ofKind(objects, "Role").map((r) => r.metadata.name)).toEqual(["access-orders"]);
    expect(ofKind(objects, "RoleBinding").map((r) => r.metadata.name)).toEqual(["access-orders"]);
  });

  it("ships the order CRDs of crds/", async () => {
    const objects = await render({}, true);
    const crds = ofKind(objects, "CustomResourceDefinition");
    const source = (file: string) =>
      yaml.parse(readFileSync(new URL(`../../crds/${file}`, import.meta.url), "utf8")) as unknown;
    expect(crds).toHaveLength(2);
    for (const file of ["c5c3.io_mariadbdatabases.yaml", "c5c3.io_rabbitmqvhosts.yaml"])
      expect(crds).toContainEqual(source(file));
  });
});
