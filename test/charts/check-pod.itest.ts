// deploy/vhost-broker's `helm test` (templates/tests/check.yaml) rendered by helm: a test-hook Pod that
// runs `vhost-broker check` with the operator's image and security context, and the Role of its account
// granting exactly the reads the check makes (src/operator/check/verdict.ts's kinds, the Lease); the
// Pod admitted under Pod Security "restricted" (server-side dry run).
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manifestObjects, renderChart, type RenderedObject } from "../../harness/charts/helm.ts";
import { freshNamespace, RESTRICTED, testCluster, type TestCluster } from "../../harness/world/kube.ts";
import { checkedKinds, type ServedSwitches } from "../../src/operator/check/verdict.ts";

const render = async (values: Record<string, unknown> = {}, settings: Record<string, unknown> = {}) =>
  manifestObjects(
    await renderChart("vhost-broker", {
      release: "vb",
      namespace: "vb-system",
      values: { ...values, settings: { "openbao-address": "http://127.0.0.1:28200", ...settings } },
    }),
  );
const named = (objects: RenderedObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}
const checkPod = (objects: RenderedObject[]) =>
  named(objects, "Pod", "vb-vhost-broker-check") as unknown as k8s.V1Pod;
const deploymentPod = (objects: RenderedObject[]) =>
  (named(objects, "Deployment", "vb-vhost-broker") as unknown as k8s.V1Deployment).spec?.template;
const env = (pod: k8s.V1Pod) =>
  Object.fromEntries((pod.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));

/** The Role's list rules as `plural.group` names, and its other rules. */
function roleReads(objects: RenderedObject[]): { listed: string[]; others: Rule[] } {
  const rules = (named(objects, "Role", "vb-vhost-broker-check")?.["rules"] ?? []) as Rule[];
  const lists = rules.filter((r) => r.verbs.join() === "list" && !r.resourceNames);
  return {
    listed: lists.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((p) => `${p}.${g}`))).sort(),
    others: rules.filter((r) => !lists.includes(r)),
  };
}

const kindsOf = (switches: ServedSwitches) =>
  checkedKinds(switches)
    .map((k) => `${k.plural}.${k.group}`)
    .sort();

describe("deploy/vhost-broker's helm test", () => {
  it("is a test-hook Pod running `check` with the operator's image, security context, Lease and account", async () => {
    const objects = await render();
    const pod = checkPod(objects);
    const operator = deploymentPod(objects);
    expect(pod.metadata?.annotations).toEqual({
      "helm.sh/hook": "test",
      "helm.sh/hook-delete-policy": "before-hook-creation",
    });
    const container = pod.spec?.containers[0];
    expect(container?.args).toEqual(["check"]);
    expect(container?.image).toBe(operator?.spec?.containers[0]?.image);
    expect(container?.securityContext).toEqual(operator?.spec?.containers[0]?.securityContext);
    expect(pod.spec?.securityContext).toEqual(operator?.spec?.securityContext);
    expect(pod.spec?.restartPolicy).toBe("Never");
    expect(container?.resources).toEqual({
      requests: { cpu: "10m", memory: "128Mi" },
      limits: { memory: "256Mi" },
    });
    expect(env(pod)).toEqual({
      VHOST_BROKER_LEADER_ELECTION_NAMESPACE: { fieldRef: { fieldPath: "metadata.namespace" } },
      VHOST_BROKER_LEADER_ELECTION_ID: "vb-vhost-broker",
    });
    expect(pod.spec?.serviceAccountName).toBe("vb-vhost-broker-check");
    // The operator's ReplicaSets, Service and PodDisruptionBudget select by name and instance.
    const selector = (named(objects, "Deployment", "vb-vhost-broker") as unknown as k8s.V1Deployment).spec
      ?.selector.matchLabels;
    const labels = pod.metadata?.labels ?? {};
    expect(Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v)).toBe(false);
    expect(named(objects, "RoleBinding", "vb-vhost-broker-check")?.["subjects"]).toEqual([
      { kind: "ServiceAccount", name: "vb-vhost-broker-check", namespace: "vb-system" },
    ]);
    expect(named(objects, "ServiceAccount", "vb-vhost-broker-check")?.metadata.annotations).toBeUndefined();
  });

  it("grants its account the operator's Lease and a list of each kind the check reads, for each switch", async () => {
    const { listed, others } = roleReads(await render());
    expect(others).toEqual([
      {
        apiGroups: ["coordination.k8s.io"],
        resources: ["leases"],
        resourceNames: ["vb-vhost-broker"],
        verbs: ["get"],
      },
    ]);
    const defaults = { "topology-controller": true, "sql-controller": false, "mariadb-orders": false };
    expect(listed).toEqual(kindsOf(defaults));
    for (const switches of [
      { ...defaults, "topology-controller": false },
      { ...defaults, "mariadb-orders": true },
      { "topology-controller": false, "sql-controller": true, "mariadb-orders": true },
    ]) {
      const settings = {
        "topology-controller": String(switches["topology-controller"]),
        // A YAML boolean, as a values file may give it.
        "sql-controller": switches["sql-controller"],
        "mariadb-orders": String(switches["mariadb-orders"]),
        ...(switches["sql-controller"] ? { "mariadb-host": "mariadb.openstack.svc" } : {}),
      };
      const objects = await render({}, settings);
      expect(roleReads(objects).listed, JSON.stringify(switches)).toEqual(kindsOf(switches));
      // The check reads the same switches, as the operator gets them.
      expect(env(checkPod(objects))).toMatchObject({
        VHOST_BROKER_TOPOLOGY_CONTROLLER: String(switches["topology-controller"]),
        VHOST_BROKER_SQL_CONTROLLER: String(switches["sql-controller"]),
        VHOST_BROKER_MARIADB_ORDERS: String(switches["mariadb-orders"]),
      });
    }
  });

  it("runs where the operator runs, with its extra environment and pull secrets", async () => {
    const values = {
      nodeSelector: { "kubernetes.io/os": "linux" },
      tolerations: [{ key: "dedicated", operator: "Exists", effect: "NoSchedule" }],
      imagePullSecrets: [{ name: "registry" }],
      extraEnv: [{ name: "KUBERNETES_SERVICE_HOST", value: "10.0.0.1" }],
      tests: { resources: { requests: { memory: "100Mi" } } },
    };
    const pod = checkPod(await render(values));
    expect(pod.spec?.nodeSelector).toEqual(values.nodeSelector);
    expect(pod.spec?.tolerations).toEqual(values.tolerations);
    expect(pod.spec?.imagePullSecrets).toEqual(values.imagePullSecrets);
    expect(env(pod)["KUBERNETES_SERVICE_HOST"]).toBe("10.0.0.1");
    // Merged into the defaults, as helm merges values.
    expect(pod.spec?.containers[0]?.resources?.requests).toEqual({ cpu: "10m", memory: "100Mi" });
  });

  it("with rbac.create=false runs as the operator's ServiceAccount; with tests.enabled=false is not there", async () => {
    const withoutRbac = await render({
      rbac: { create: false },
      serviceAccount: { create: false, name: "ops" },
    });
    expect(checkPod(withoutRbac).spec?.serviceAccountName).toBe("ops");
    expect(withoutRbac.filter((o) => o.metadata.name === "vb-vhost-broker-check").map((o) => o.kind)).toEqual(
      ["Pod"],
    );
    const off = await render({ tests: { enabled: false } });
    expect(off.filter((o) => o.metadata.name.endsWith("-check"))).toEqual([]);
    await expect(render({ tests: { enabled: "on-install" } })).rejects.toThrow(/tests.enabled/);
  });
});

describe("deploy/vhost-broker's helm test under Pod Security restricted", () => {
  let cluster: TestCluster;
  let namespace: string;

  beforeAll(async () => {
    cluster = testCluster("management");
    namespace = await freshNamespace(cluster, "vb-check-restricted", RESTRICTED);
  });
  afterAll(async () => {
    await cluster?.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it("admits its Pod", async () => {
    const pod = checkPod(await render());
    const admitted = await cluster.core.createNamespacedPod({
      namespace,
      dryRun: "All",
      body: { metadata: { name: "vb-check" }, spec: pod.spec },
    });
    expect(admitted.spec?.securityContext?.runAsUser).toBe(65532);
  });
});
