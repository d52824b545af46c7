// deploy/vhost-broker rendered by `helm template` with rbac.secretNamespaces: the ClusterRole loses its
// Secret rule, each listed namespace gets a Role and RoleBinding for Secrets, and the operator is told
// the same namespaces; without the value, Secrets stay in the ClusterRole as before.
import { describe, expect, it } from "vitest";
import { manifestObjects, renderChart, type RenderedObject } from "../../harness/charts/helm.ts";

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const render = async (values: Record<string, unknown> = {}) =>
  manifestObjects(
    await renderChart("vhost-broker", {
      release: "vb",
      namespace: "vb-system",
      values: { settings: { "openbao-address": "http://127.0.0.1:28200" }, ...values },
    }),
  );
const rulesOf = (o: RenderedObject | undefined) => (o?.["rules"] ?? []) as Rule[];
const secretRules = (rules: Rule[]) =>
  rules.filter((r) => r.apiGroups.includes("") && r.resources.includes("secrets"));
const operatorRole = (objects: RenderedObject[]) =>
  objects.find((o) => o.kind === "ClusterRole" && o.metadata.name === "vb-vhost-broker");
const secretEnv = (objects: RenderedObject[]) => {
  const deployment = objects.find((o) => o.kind === "Deployment") as
    | { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } }
    | undefined;
  return deployment?.spec.template.spec.containers[0]?.env.find(
    (e) => e.name === "VHOST_BROKER_SECRET_NAMESPACES",
  );
};

describe("rbac.secretNamespaces", () => {
  it("unset: Secrets in the ClusterRole, no Secret Role, no setting", async () => {
    const objects = await render();
    expect(secretRules(rulesOf(operatorRole(objects)))).toHaveLength(1);
    expect(objects.filter((o) => o.metadata.name === "vb-vhost-broker-secrets")).toEqual([]);
    expect(secretEnv(objects)).toBeUndefined();
  });

  it("set: no Secret rule in the ClusterRole, a Role and RoleBinding in each namespace", async () => {
    const objects = await render({ rbac: { secretNamespaces: ["openstack", "tenant-a"] } });
    const clusterRole = rulesOf(operatorRole(objects));
    expect(secretRules(clusterRole)).toEqual([]);
    // Everything else stays cluster-wide.
    expect(clusterRole.some((r) => r.resources.includes("rabbitmqvhosts"))).toBe(true);
    expect(clusterRole.some((r) => r.resources.includes("services"))).toBe(true);
    for (const namespace of ["openstack", "tenant-a"]) {
      const role = objects.find((o) => o.kind === "Role" && o.metadata.namespace === namespace);
      expect(role?.metadata.name).toBe("vb-vhost-broker-secrets");
      expect(rulesOf(role)).toEqual([
        {
          apiGroups: [""],
          resources: ["secrets"],
          verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
        },
      ]);
      const binding = objects.find((o) => o.kind === "RoleBinding" && o.metadata.namespace === namespace);
      expect(binding?.["roleRef"]).toEqual({
        apiGroup: "rbac.authorization.k8s.io",
        kind: "Role",
        name: "vb-vhost-broker-secrets",
      });
      expect(binding?.["subjects"]).toEqual([
        { kind: "ServiceAccount", name: "vb-vhost-broker", namespace: "vb-system" },
      ]);
    }
    expect(objects.filter((o) => o.metadata.name === "vb-vhost-broker-secrets")).toHaveLength(4);
    expect(secretEnv(objects)?.value).toBe("openstack,tenant-a");
  });

  it("refuses a name that is not a namespace, and the setting set directly", async () => {
    await expect(render({ rbac: { secretNamespaces: ["Not_A_Namespace"] } })).rejects.toThrow(
      /secretNamespaces/,
    );
    await expect(
      render({ settings: { "openbao-address": "http://127.0.0.1:28200", "secret-namespaces": "a" } }),
    ).rejects.toThrow(/secret-namespaces/);
  });
});
