// The edges of a target cluster, with the operator process. RBAC: the operator holds only the token of
// deploy/target-cluster-access's ServiceAccount; asked to watch a namespace the chart does not assign it
// is refused there, and an order in that namespace gets nothing, while orders in the assigned one are
// served. Reachability: the registration is pointed at a closed port and back; while the target is
// unreachable an order on the management cluster converges, and a change made on the target meanwhile is
// served once the target is back.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveredSecretName } from "../src/orders/core/naming.ts";
import { userName } from "../src/orders/rabbitmq/naming.ts";
import { eventually } from "../harness/world/kube.ts";
import { amqpLogin } from "../harness/probes/login-prober.ts";
import { freePort } from "../harness/world/ports.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import {
  applyOrder,
  createTargetWorld,
  destroyTargetWorld,
  isReady,
  managementChildren,
  operatorView,
  publishEndpoint,
  readOrder,
  readSecret,
  register,
  waitForOrder,
  type TargetWorld,
} from "../harness/world/target-cluster.ts";

const spec = (passwordGeneration = 1) => ({
  rotation: { interval: "0s", gracePeriod: "10s" },
  deletionPolicy: "Delete",
  passwordGeneration,
});

describe("a target cluster's RBAC and reachability, operator process", () => {
  let world: TargetWorld | undefined;
  let operator: OperatorProcess | undefined;
  const w = (): TargetWorld => {
    if (!world) throw new Error("no world");
    return world;
  };
  const assigned = () => w().assigned[0] ?? "";
  const unassigned = () => w().unassigned[0] ?? "";
  const onManagement = () => w().managementTenants[0] ?? "";
  const both = () => [assigned(), unassigned()];
  /** Log lines after `from` that contain every one of `parts`. */
  const logged = (from: number, ...parts: string[]) =>
    (operator?.logs().split("\n") ?? []).slice(from).filter((l) => parts.every((p) => l.includes(p)));
  const logLength = () => operator?.logs().split("\n").length ?? 0;

  beforeAll(async () => {
    world = await createTargetWorld("mca", { unassigned: 1, managementTenants: 1 });
    await publishEndpoint(world, `127.0.0.1:${world.broker.amqpPort}`);
    operator = await OperatorProcess.start({ clusterSecretNamespace: world.secretNs });
  }, 15 * 60_000);

  afterAll(async () => {
    try {
      await destroyTargetWorld(world);
    } finally {
      await operator?.stop();
    }
  }, 180_000);

  it("the chart's token reaches the orders and Secrets of the assigned namespace only", async () => {
    const view = operatorView(w());
    const orders = view.makeApiClient(k8s.CustomObjectsApi);
    const core = view.makeApiClient(k8s.CoreV1Api);
    const api = { group: "c5c3.io", version: "v1alpha1", plural: "rabbitmqvhosts" };
    const status = async (call: Promise<unknown>) =>
      call.then(
        () => 200,
        (error: unknown) => (error instanceof k8s.ApiException ? error.code : -1),
      );
    expect(await status(orders.listNamespacedCustomObject({ ...api, namespace: assigned() }))).toBe(200);
    expect(await status(core.listNamespacedSecret({ namespace: assigned() }))).toBe(200);
    for (const namespace of [unassigned(), "default", w().accessNs]) {
      expect(await status(orders.listNamespacedCustomObject({ ...api, namespace })), namespace).toBe(403);
      expect(await status(core.listNamespacedSecret({ namespace })), namespace).toBe(403);
    }
    expect(await status(orders.listClusterCustomObject(api))).toBe(403);
    expect(await status(core.listNamespace())).toBe(403);
  });

  it("serves the assigned namespace and nothing in a namespace the chart does not assign", async () => {
    // The registration asks for both namespaces; only RBAC stands between the operator and the second.
    const from = logLength();
    await register(w(), { namespaces: both() });
    await applyOrder(w(), { namespace: unassigned() }, "stray", spec());
    await applyOrder(w(), { namespace: assigned() }, "edge", spec());
    await eventually("the operator to be refused a watch in the unassigned namespace", async () => {
      const lines = logged(
        from,
        `"namespace":"${unassigned()}"`,
        "list/watch failed",
        `"cluster":"target-b"`,
      );
      return lines.length > 0 ? lines : undefined;
    });
    // A cache that cannot sync shows in the metrics; the operator stays ready (docs/metrics.md).
    const readyz = await fetch(`http://127.0.0.1:${operator?.probePort}/readyz`);
    await readyz.arrayBuffer();
    expect(readyz.ok).toBe(true);
    expect(await operator?.metrics()).toContain('vhost_broker_cluster_caches_synced{cluster="target-b"} 0');
    const edge = await waitForOrder(w().target, assigned(), "edge", "edge Ready", isReady, 90_000);
    expect(edge?.status?.host).toBe("127.0.0.1");
    // The chart grants events in the namespaces it assigns: the order's are recorded beside it, and none
    // is refused. The operator serves the management cluster too, where another file's orders may still
    // be going with their namespace: only refusals in this test's namespaces count.
    const events = await eventually("edge's Events on the target", async () => {
      const list = await w().target.core.listNamespacedEvent({ namespace: assigned() });
      return list.items.some((e) => e.involvedObject.name === "edge") ? list.items : undefined;
    });
    expect(events.every((e) => e.involvedObject.kind === "RabbitMQVhost")).toBe(true);
    for (const namespace of both()) {
      expect(logged(from, "could not record an event", `namespaces/${namespace}/`)).toEqual([]);
    }
    // Both orders were created together; a few seconds more, and the stray one still has nothing.
    await new Promise((r) => setTimeout(r, 5_000));
    const stray = await readOrder(w().target, unassigned(), "stray");
    // Only the CRD's schema default: the operator wrote no status.
    expect(stray?.status).toEqual({ observedGeneration: 0 });
    expect(stray?.metadata?.finalizers ?? []).toEqual([]);
    const key = { cluster: w().clusterName, namespace: unassigned(), name: "stray" };
    for (const plural of ["vhosts", "users", "permissions", "secrets"]) {
      expect(await managementChildren(w(), key, plural), plural).toEqual([]);
    }
    expect(await readSecret(w().target, unassigned(), deliveredSecretName(key))).toBeUndefined();
  }, 150_000);

  it("keeps converging on the management cluster while the target is unreachable, and serves the target once back", async () => {
    const edgeKey = { cluster: w().clusterName, namespace: assigned(), name: "edge" };
    const before = await readSecret(w().target, assigned(), "edge-credentials");
    expect(before?.data["username"]).toBe(userName(edgeKey, 1));

    // Unreachable: the registration names a port nobody listens on.
    const from = logLength();
    await register(w(), { namespaces: both(), server: `https://127.0.0.1:${await freePort()}` });
    await eventually("the operator to find target-b unreachable", async () => {
      const lines = logged(from, "target cluster unreachable", `"cluster":"target-b"`);
      return lines.length > 0 ? true : undefined;
    });
    const outageStart = Date.now();
    // A change on the target while the operator cannot reach it.
    await applyOrder(w(), { namespace: assigned() }, "edge", spec(2));

    // An order created on the management cluster during the outage converges.
    await applyOrder(w(), { namespace: onManagement(), on: "management" }, "local", spec());
    const local = await waitForOrder(w().management, onManagement(), "local", "local Ready", isReady, 90_000);
    expect([local?.status?.host, local?.status?.port]).toEqual([w().broker.amqpHost, w().broker.amqpPort]);
    const localSecret = await readSecret(w().management, onManagement(), "local-credentials");
    expect(await amqpLogin(localSecret?.data["transport_url"] ?? "")).toEqual({ kind: "ok" });

    // The target's order was not served meanwhile, and the retries kept failing.
    const stale = await readOrder(w().target, assigned(), "edge");
    expect(stale?.status?.passwordGeneration).toBe(1);
    expect(stale?.status?.observedGeneration).toBeLessThan(stale?.metadata?.generation ?? 0);
    await eventually("a retry to fail too", async () =>
      logged(from, "target cluster unreachable", `"cluster":"target-b"`).length >= 2 ? true : undefined,
    );
    console.log(`management order Ready ${Date.now() - outageStart} ms into the outage`);

    // Back: the registration is restored, and the change made on the target is served.
    await register(w(), { namespaces: both() });
    const edge = await waitForOrder(
      w().target,
      assigned(),
      "edge",
      "edge at generation 2 once the target is back",
      (o) => o?.status?.passwordGeneration === 2 && isReady(o),
      90_000,
    );
    expect(edge?.status?.observedGeneration).toBe(edge?.metadata?.generation);
    const after = await eventually("the target's Secret to carry generation 2", async () => {
      const found = await readSecret(w().target, assigned(), "edge-credentials");
      return found?.data["username"] === userName(edgeKey, 2) ? found : undefined;
    });
    expect(await amqpLogin(after.data["transport_url"] ?? "")).toEqual({ kind: "ok" });
    expect(isReady(await readOrder(w().management, onManagement(), "local"))).toBe(true);
  }, 240_000);
});
