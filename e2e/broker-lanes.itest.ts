// A lane per broker, through the operator process: Vhosts of a hung broker (a listener that accepts
// TCP and never answers) come first and fill their lane, and the Vhosts of the healthy broker created
// after them are Ready within seconds rather than behind the hung broker's 10 s timeouts. The hung
// broker's waiting Vhosts get a Warning Event naming it.
import { randomBytes } from "node:crypto";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createManagedBus, installCrds, localBrokerFromEnv } from "../harness/world/managed-bus.ts";
import { localEnv } from "../harness/world/env.ts";
import { eventually, freshNamespace, testCluster, type TestCluster } from "../harness/world/kube.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import { TcpProxy } from "../harness/world/tcp-proxy.ts";

const vhosts = { group: "rabbitmq.com", version: "v1beta1", plural: "vhosts" } as const;
const HUNG = 12;
const HEALTHY = 6;

interface Listed {
  items: {
    metadata: { name: string };
    spec: { rabbitmqClusterReference: { name: string } };
    status?: { conditions?: { type: string; status: string }[] };
  }[];
}

describe("a lane per broker, operator process", () => {
  const broker = localBrokerFromEnv(localEnv() as unknown as NodeJS.ProcessEnv);
  const run = randomBytes(3).toString("hex");
  let cluster: TestCluster;
  let custom: k8s.CustomObjectsApi;
  let ns = "";
  let hung: TcpProxy | undefined;
  let operator: OperatorProcess | undefined;

  beforeAll(async () => {
    cluster = testCluster("management");
    custom = cluster.config.makeApiClient(k8s.CustomObjectsApi);
    await installCrds(cluster.config);
    ns = await freshNamespace(cluster, "lanes");
    hung = await TcpProxy.to(broker.managementUrl);
    hung.hold();
    await createManagedBus(cluster.config, ns, broker, "healthy");
    await createManagedBus(
      cluster.config,
      ns,
      { ...broker, managementUrl: `http://127.0.0.1:${hung.port}` },
      "hung",
    );
  }, 120_000);

  afterAll(async () => {
    await operator?.stop();
    // The hung broker's Vhosts keep their finalizer: taken off here, with the operator gone.
    const list = (await custom.listNamespacedCustomObject({ ...vhosts, namespace: ns }).catch(() => ({
      items: [],
    }))) as Listed;
    const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
    for (const { metadata } of list.items) {
      await custom
        .patchNamespacedCustomObject(
          { ...vhosts, namespace: ns, name: metadata.name, body: { metadata: { finalizers: null } } },
          merge,
        )
        .catch(() => undefined);
    }
    const auth = Buffer.from(`${broker.adminUsername}:${broker.adminPassword}`).toString("base64");
    for (let i = 0; i < HEALTHY; i++) {
      await fetch(new URL(`/api/vhosts/lanes-${run}-ok-${i}`, broker.managementUrl), {
        method: "DELETE",
        headers: { authorization: `Basic ${auth}` },
      });
    }
    if (ns) await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
    await hung?.stop();
  }, 120_000);

  const createVhost = (name: string, brokerName: string) =>
    custom.createNamespacedCustomObject({
      ...vhosts,
      namespace: ns,
      body: {
        apiVersion: "rabbitmq.com/v1beta1",
        kind: "Vhost",
        metadata: { name, namespace: ns },
        spec: { name, rabbitmqClusterReference: { name: brokerName } },
      },
    });

  const readyOf = async (brokerName: string) => {
    const list = (await custom.listNamespacedCustomObject({ ...vhosts, namespace: ns })) as Listed;
    return list.items.filter(
      (v) =>
        v.spec.rabbitmqClusterReference.name === brokerName &&
        v.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
    ).length;
  };

  it("makes the healthy broker's Vhosts Ready while the hung one holds its own lane, and names it", async () => {
    // Two Vhost passes per broker: the hung broker's twelve fill their lane and wait behind it.
    operator = await OperatorProcess.start({
      args: ["--topology-vhost-concurrent-reconciles=2", "--backend-request-timeout=10s"],
      keepLogs: false,
    });
    for (let i = 0; i < HUNG; i++) await createVhost(`lanes-${run}-hung-${i}`, "hung");
    // The hung broker's first passes have started and wait for an answer.
    await new Promise((r) => setTimeout(r, 2_000));
    const created = performance.now();
    for (let i = 0; i < HEALTHY; i++) await createVhost(`lanes-${run}-ok-${i}`, "healthy");
    await eventually(
      `${HEALTHY} healthy Vhosts Ready`,
      async () => ((await readyOf("healthy")) === HEALTHY ? true : undefined),
      60_000,
      100,
    );
    const healthyMs = performance.now() - created;
    // One shared pool of two workers would have waited for the hung broker's 10 s deadline at least
    // (six of its passes in turn ahead of them: a minute).
    expect(healthyMs).toBeLessThan(8_000);
    expect(await readyOf("hung")).toBe(0);

    // The hung broker's Vhosts waiting in its lane are told why, naming the broker; no healthy one is.
    const events = await eventually(
      "a BrokerSlow Event",
      async () => {
        const list = await cluster.config
          .makeApiClient(k8s.EventsV1Api)
          .listNamespacedEvent({ namespace: ns });
        const slow = list.items.filter((e) => e.reason === "BrokerSlow");
        return slow.length > 0 ? slow : undefined;
      },
      30_000,
      500,
    );
    for (const event of events) {
      expect(event.regarding?.kind).toBe("Vhost");
      expect(event.regarding?.name).toMatch(new RegExp(`^lanes-${run}-hung-`));
      expect(event.type).toBe("Warning");
      expect(event.note).toContain(`RabbitmqCluster ${ns}/hung is slow`);
    }
  }, 180_000);
});
