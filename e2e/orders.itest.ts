// The order end to end against the local environment, pass by pass in this process: what leg 1 of the
// original scenario delivers beyond the operator-process lifecycle (e2e/support/order-lifecycle.ts, which
// runs legs 1 to 5), and a delivery refused into a Secret the order does not own. Real kube-apiserver,
// RabbitMQ and OpenBao; the topology operator's part is played by the test's stand-in.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExampleOrder } from "../harness/world/managed-bus.ts";
import { backupPath, childSelector } from "../src/orders/core/naming.ts";
import { RABBITMQ_NAMING, vhostName } from "../src/orders/rabbitmq/naming.ts";
import { condition, isReady } from "../harness/operator/order-driver.ts";
import {
  amqpLogin,
  applyOrder,
  decode,
  deleteOrder,
  openBaoRead,
  setUpOrderEnv,
  tearDownOrderEnv,
  type OrderEnv,
} from "../harness/world/order-env.ts";
import { brokerGet } from "../harness/world/topology-stand-in.ts";

const KEYS = ["transport_url", "host", "port", "username", "password", "vhost"];

describe("a RabbitMQVhost order on the management cluster", () => {
  let env: OrderEnv;
  /** Every password and transport URL the tests saw, to search logs, events and conditions for. */
  const secrets = new Set<string>();
  const key = () => ({ cluster: "", namespace: env.tenantNs, name: "workflow" });

  const delivered = async (name = "workflow") => {
    const secret = await env.cluster.core.readNamespacedSecret({
      namespace: env.tenantNs,
      name: `${name}-credentials`,
    });
    const data = Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, decode(v)]));
    if (data["password"]) secrets.add(data["password"]);
    if (data["transport_url"]) secrets.add(data["transport_url"]);
    return { secret, data };
  };
  const list = (plural: string) =>
    env.custom
      .listNamespacedCustomObject({
        group: "rabbitmq.com",
        version: "v1beta1",
        plural,
        namespace: env.cpNs,
        labelSelector: childSelector(RABBITMQ_NAMING, key()),
      })
      .then((l) => (l as { items: unknown[] }).items);

  beforeAll(async () => {
    env = await setUpOrderEnv("orders");
  });
  afterAll(async () => {
    await tearDownOrderEnv(env);
  });

  it("leg 1: provisions the vhost, user and permission, backs up and delivers", async () => {
    await createExampleOrder(env.cluster.config, env.tenantNs, { name: "cp", namespace: env.cpNs });
    const order = await env.driver.until(env.tenantNs, "workflow", "Ready", isReady);
    const vhost = vhostName(key());
    env.vhosts.add(vhost);
    const status = order?.status ?? {};
    expect(status.vhost).toMatch(/^workflow-[0-9a-f]{8}$/);
    expect(status.vhost).toBe(vhost);
    expect(status.username).toBe(`${vhost}-v1`);
    expect(status.passwordGeneration).toBe(1);
    expect(status.secretName).toBe("workflow-credentials");
    expect(status.secretKeys).toEqual(KEYS);
    expect(status.observedGeneration).toBe(order?.metadata.generation);
    expect(status.lastRotation).toBeDefined();
    expect(Date.parse(status.nextRotation ?? "") - Date.parse(status.lastRotation ?? "")).toBe(180_000);
    expect(condition(order, "VhostReady")?.reason).toBe("VhostProvisioned");
    expect(condition(order, "DeliveryReady")?.reason).toBe("Delivered");
    expect(condition(order, "Ready")?.reason).toBe("AllReady");

    expect(await list("vhosts")).toHaveLength(1);
    expect(await list("users")).toHaveLength(1);
    expect(await list("permissions")).toHaveLength(1);

    const { secret, data } = await delivered();
    expect(Object.keys(data).sort()).toEqual([...KEYS].sort());
    expect(secret.metadata?.ownerReferences).toEqual([
      expect.objectContaining({
        kind: "RabbitMQVhost",
        name: "workflow",
        uid: order?.metadata.uid,
        controller: true,
      }),
    ]);
    expect(secret.metadata?.labels).toEqual({
      "c5c3.io/rabbitmqvhost-name": "workflow",
      "c5c3.io/rabbitmqvhost-namespace": env.tenantNs,
    });
    const defaultUser = await env.cluster.core.readNamespacedSecret({
      namespace: env.cpNs,
      name: "rabbitmq-default-user",
    });
    expect(data["host"]).toBe(decode(defaultUser.data?.["host"]));
    expect(data["port"]).toBe(decode(defaultUser.data?.["port"]));
    expect(status.host).toBe(data["host"]);
    expect(String(status.port)).toBe(data["port"]);
    expect(data["username"]).toBe(`${vhost}-v1`);
    expect(data["vhost"]).toBe(vhost);
    expect(data["password"]).toHaveLength(43);

    expect(await openBaoRead(backupPath(RABBITMQ_NAMING, key(), env.cpNs))).toEqual(data);
    expect(await amqpLogin(data["transport_url"] ?? "")).toBe(true);
    const permissions = (await brokerGet(
      `/api/users/${encodeURIComponent(`${vhost}-v1`)}/permissions`,
    )) as object[];
    expect(permissions).toEqual([
      expect.objectContaining({ vhost, configure: ".*", write: ".*", read: ".*" }),
    ]);
  });

  it("refuses delivery into a Secret of the delivered name that it does not own", async () => {
    await env.cluster.core.createNamespacedSecret({
      namespace: env.tenantNs,
      body: { metadata: { name: "squatted-credentials" }, stringData: { owner: "someone else" } },
    });
    await applyOrder(env, "squatted", { controlPlaneRef: { name: "cp", namespace: env.cpNs } });
    const order = await env.driver.until(
      env.tenantNs,
      "squatted",
      "DeliveryRefused",
      (o) => condition(o, "DeliveryReady")?.reason === "DeliveryRefused",
    );
    expect(condition(order, "DeliveryReady")?.message).toBe(
      `Secret ${env.tenantNs}/squatted-credentials exists and is not owned by this order; delete it or rename the order`,
    );
    expect(condition(order, "VhostReady")?.status).toBe("True");
    const foreign = await env.cluster.core.readNamespacedSecret({
      namespace: env.tenantNs,
      name: "squatted-credentials",
    });
    expect(Object.keys(foreign.data ?? {})).toEqual(["owner"]);
    expect(foreign.metadata?.ownerReferences).toBeUndefined();
    env.vhosts.add(order?.status?.vhost ?? "");
    await deleteOrder(env, "squatted");
    expect(
      (await env.cluster.core.readNamespacedSecret({ namespace: env.tenantNs, name: "squatted-credentials" }))
        .data,
    ).toBeDefined();
  });

  it("writes no password or transport URL into conditions, events or logs", async () => {
    expect(secrets.size).toBeGreaterThanOrEqual(2);
    const order = await env.driver.order(env.tenantNs, "workflow");
    const texts = [
      JSON.stringify(order?.status ?? {}),
      JSON.stringify(env.driver.events),
      env.driver.logs.join(""),
      env.driver.errors.join("\n"),
    ];
    expect(env.driver.logs.length).toBeGreaterThan(0);
    expect(env.driver.events.length).toBeGreaterThan(0);
    for (const secret of secrets) for (const text of texts) expect(text.includes(secret)).toBe(false);
  });
});
