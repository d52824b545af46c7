// The operator with exactly deploy/vhost-broker's RBAC: the chart installed by `helm install`, the
// operator process run with nothing but a token of the chart's ServiceAccount (leader election on, in the
// release namespace, the order-quota gatekeeper plugin on), and a whole order (provision, rotate,
// deliver, delete) through it. A rule taken from the chart's ClusterRole shows up on the order as the
// API's refusal.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OperatorProcess } from "../../harness/operator/operator-process.ts";
import {
  applyOrder,
  condition,
  createWorld,
  destroyWorld,
  isReady,
  readSecret,
  waitForOrder,
  type World,
} from "../../harness/world/world.ts";
import { localEnv } from "../../harness/world/env.ts";
import { testCluster } from "../../harness/world/kube.ts";
import {
  installRelease,
  runAsRelease,
  uninstallRelease,
  type Release,
  type ReleaseRun,
} from "../../harness/charts/release.ts";

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

describe("the operator with exactly the chart's RBAC", () => {
  const cluster = testCluster("management");
  const rbac = cluster.config.makeApiClient(k8s.RbacAuthorizationV1Api);
  let release: Release | undefined;
  let run: ReleaseRun | undefined;
  let operator: OperatorProcess | undefined;
  let world: World | undefined;
  let rules: Rule[] = [];

  beforeAll(async () => {
    world = await createWorld("rbac");
    release = await installRelease(cluster, "vb-rbac", { "settings.openbao-address": localEnv().BAO_ADDR });
    rules = (await rbac.readClusterRole({ name: release.fullname })).rules as Rule[];
    run = await runAsRelease(cluster, release, {
      args: [
        // It reads the order's namespace, which a refusal would turn into a rejected order.
        "--gatekeeper-custom-plugins=order-quota",
        // A refused write is retried at this interval (30 s by default): the order recovers from the
        // restored rule within it, with room to spare on a loaded machine.
        "--transient-requeue-interval=5s",
      ],
    });
    operator = run.operator;
  });
  afterAll(async () => {
    try {
      if (release) await rbac.patchClusterRole(rolePatch(release, rules), merge);
      await destroyWorld(world);
    } finally {
      await operator?.stop();
      await run?.close();
      await uninstallRelease(cluster, release);
    }
  });

  it("provisions, rotates, delivers and deletes an order", async () => {
    if (!world || !release) throw new Error("no world");
    await applyOrder(world, "exact", {
      passwordGeneration: 1,
      rotation: { interval: "0s", gracePeriod: "2s" },
    });
    await waitForOrder(world, "exact", "Ready", isReady);
    const first = await readSecret(world, world.tenantNs, "exact-credentials");
    await applyOrder(world, "exact", {
      passwordGeneration: 2,
      rotation: { interval: "0s", gracePeriod: "2s" },
    });
    const second = await waitForOrder(
      world,
      "exact",
      "generation 2 delivered",
      (o) => o?.status?.passwordGeneration === 2 && isReady(o),
    );
    const delivered = await readSecret(world, world.tenantNs, "exact-credentials");
    expect(delivered["username"]).not.toBe(first["username"]);
    expect(delivered["username"]).toBe(second?.status?.username);
    // The Lease of the chart's leader-election Role is held by the operator.
    const lease = await cluster.config
      .makeApiClient(k8s.CoordinationV1Api)
      .readNamespacedLease({ name: release.fullname, namespace: release.namespace });
    expect(lease.spec?.holderIdentity).toBeTruthy();
    await world.custom.deleteNamespacedCustomObject({
      group: "c5c3.io",
      version: "v1alpha1",
      plural: "rabbitmqvhosts",
      namespace: world.tenantNs,
      name: "exact",
    });
    await waitForOrder(world, "exact", "the order to be gone", (o) => o === undefined);
    expect(operator?.logs()).not.toMatch(/forbidden/i);
  });

  it("reports a rule taken from the ClusterRole as the API's refusal on the order", async () => {
    if (!world || !release) throw new Error("no world");
    // Without patch on rabbitmq.com, the order's server-side applies of its children are refused.
    const fewer = rules.map((r) =>
      r.apiGroups.includes("rabbitmq.com") && r.verbs.includes("patch")
        ? { ...r, verbs: r.verbs.filter((v) => v !== "patch") }
        : r,
    );
    await rbac.patchClusterRole(rolePatch(release, fewer), merge);
    await applyOrder(world, "denied", { passwordGeneration: 1 });
    const order = await waitForOrder(world, "denied", "a forbidden condition", (o) =>
      /forbidden/.test(condition(o, "VhostReady")?.message ?? ""),
    );
    const message = condition(order, "VhostReady")?.message ?? "";
    expect(message).toMatch(/cannot patch resource "vhosts" in API group "rabbitmq.com"/);
    expect(message).toContain(`system:serviceaccount:${release.namespace}:${release.fullname}`);
    await rbac.patchClusterRole(rolePatch(release, rules), merge);
    await waitForOrder(world, "denied", "Ready once the rule is back", isReady).catch((error: unknown) => {
      const tail = operator?.logs().split("\n").slice(-30).join("\n");
      throw new Error(`${(error as Error).message}\nthe operator's last log lines:\n${tail}`, {
        cause: error,
      });
    });
  });
});

const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
const rolePatch = (release: Release, rules: Rule[]) => ({ name: release.fullname, body: { rules } });
