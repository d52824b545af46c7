// A fresh world for one end-to-end file: the CRDs, a ControlPlane namespace with the managed-bus stand-in
// and a ControlPlane `cp`, a tenant namespace it assigns, the topology stand-in and the order driver; and
// the clean-up that removes all of it (orders torn down by the reconciler first).
import * as k8s from "@kubernetes/client-node";
import amqp from "amqplib";
import { createControlPlane, createManagedBus, installCrds, localBrokerFromEnv } from "./managed-bus.ts";
import { localEnv } from "./env.ts";
import { freshNamespace, testCluster, type TestCluster } from "./kube.ts";
import { OrderDriver } from "../operator/order-driver.ts";
import { broker, TopologyStandIn } from "./topology-stand-in.ts";

export interface OrderEnv {
  cluster: TestCluster;
  custom: k8s.CustomObjectsApi;
  cpNs: string;
  tenantNs: string;
  driver: OrderDriver;
  /** Vhosts the file created on the broker, removed at the end (a Retain deletion leaves them). */
  vhosts: Set<string>;
}

export async function setUpOrderEnv(prefix: string): Promise<OrderEnv> {
  const cluster = testCluster("management");
  await installCrds(cluster.config);
  const cpNs = await freshNamespace(cluster, `${prefix}-cp`);
  const tenantNs = await freshNamespace(cluster, `${prefix}-tenant`);
  await createManagedBus(
    cluster.config,
    cpNs,
    localBrokerFromEnv(localEnv() as unknown as NodeJS.ProcessEnv),
  );
  await createControlPlane(cluster.config, cpNs, "cp", [{ namespace: tenantNs }]);
  const driver = new OrderDriver(cluster, new TopologyStandIn(cluster, cpNs));
  return {
    cluster,
    custom: cluster.config.makeApiClient(k8s.CustomObjectsApi),
    cpNs,
    tenantNs,
    driver,
    vhosts: new Set(),
  };
}

export async function tearDownOrderEnv(env: OrderEnv | undefined): Promise<void> {
  if (!env) return;
  const list = (await env.custom.listNamespacedCustomObject({
    group: "c5c3.io",
    version: "v1alpha1",
    plural: "rabbitmqvhosts",
    namespace: env.tenantNs,
  })) as { items: { metadata: { name: string } }[] };
  for (const item of list.items) {
    await deleteOrder(env, item.metadata.name).catch(() => undefined);
  }
  for (const vhost of env.vhosts) await broker("DELETE", `/api/vhosts/${encodeURIComponent(vhost)}`);
  for (const ns of [env.tenantNs, env.cpNs])
    await env.cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
}

/** Deletes an order and drives its teardown until it is gone. */
export async function deleteOrder(env: OrderEnv, name: string): Promise<void> {
  await env.custom.deleteNamespacedCustomObject({
    group: "c5c3.io",
    version: "v1alpha1",
    plural: "rabbitmqvhosts",
    namespace: env.tenantNs,
    name,
  });
  await env.driver.until(env.tenantNs, name, `order ${name} to be gone`, (o) => o === undefined, 60_000);
}

export async function applyOrder(env: OrderEnv, name: string, spec: Record<string, unknown>): Promise<void> {
  await env.custom.patchNamespacedCustomObject(
    {
      group: "c5c3.io",
      version: "v1alpha1",
      plural: "rabbitmqvhosts",
      namespace: env.tenantNs,
      name,
      body: {
        apiVersion: "c5c3.io/v1alpha1",
        kind: "RabbitMQVhost",
        metadata: { name, namespace: env.tenantNs },
        spec,
      },
      fieldManager: "e2e-tenant",
      force: true,
    },
    k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.ServerSideApply),
  );
}

export const decode = (v: string | undefined): string => (v ? Buffer.from(v, "base64").toString("utf8") : "");

/** An AMQP login with a delivered transport_url (rabbit:// is oslo.messaging's name for amqp://). */
export async function amqpLogin(transportUrl: string): Promise<true | string> {
  try {
    const connection = await amqp.connect(transportUrl.replace(/^rabbit:/, "amqp:"), { timeout: 5_000 });
    connection.on("error", () => undefined);
    await connection.close();
    return true;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Reads an OpenBao KV v2 path directly (not through the project's store). */
export async function openBaoRead(path: string): Promise<Record<string, string> | undefined> {
  const env = localEnv();
  const res = await fetch(`${env.BAO_ADDR}/v1/kv-v2/data/${path}`, {
    headers: { "X-Vault-Token": env.BAO_TOKEN },
  });
  if (res.status === 404) {
    await res.arrayBuffer();
    return undefined;
  }
  if (!res.ok) throw new Error(`OpenBao read: HTTP ${res.status}`);
  const body = (await res.json()) as { data: { data: Record<string, string> } };
  return body.data.data;
}
