// Rotation end to end: a raised passwordGeneration with the schedule off delivers the new generation,
// the superseded user keeps working through its grace period and is refused after it, and a successor a
// faulty topology operator reports Ready without reaching the broker is never delivered.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childSelector } from "../src/orders/core/naming.ts";
import { RABBITMQ_NAMING, vhostName } from "../src/orders/rabbitmq/naming.ts";
import { condition, isReady } from "../harness/operator/order-driver.ts";
import {
  amqpLogin,
  applyOrder,
  decode,
  setUpOrderEnv,
  tearDownOrderEnv,
  type OrderEnv,
} from "../harness/world/order-env.ts";
import { broker } from "../harness/world/topology-stand-in.ts";

describe("rotating a RabbitMQVhost order", () => {
  let env: OrderEnv;
  const secrets = new Set<string>();
  const key = () => ({ cluster: "", namespace: env.tenantNs, name: "rotor" });
  const spec = (passwordGeneration: number) => ({
    controlPlaneRef: { name: "cp", namespace: env.cpNs },
    passwordGeneration,
    rotation: { interval: "0s", gracePeriod: "5s" },
  });
  const delivered = async () => {
    const secret = await env.cluster.core.readNamespacedSecret({
      namespace: env.tenantNs,
      name: "rotor-credentials",
    });
    const data = Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, decode(v)]));
    secrets.add(data["password"] ?? "");
    secrets.add(data["transport_url"] ?? "");
    return data;
  };
  const count = async (plural: string) =>
    (
      (await env.custom.listNamespacedCustomObject({
        group: "rabbitmq.com",
        version: "v1beta1",
        plural,
        namespace: env.cpNs,
        labelSelector: childSelector(RABBITMQ_NAMING, key()),
      })) as { items: unknown[] }
    ).items.length;

  beforeAll(async () => {
    env = await setUpOrderEnv("rotation");
  });
  afterAll(async () => {
    await tearDownOrderEnv(env);
  });

  it("delivers a raised generation, keeps the old user through the grace period, then removes it", async () => {
    await applyOrder(env, "rotor", spec(1));
    const first = await env.driver.until(env.tenantNs, "rotor", "Ready", isReady);
    env.vhosts.add(vhostName(key()));
    expect(first?.status?.passwordGeneration).toBe(1);
    expect(first?.status?.nextRotation).toBeUndefined();
    const v1 = await delivered();

    await applyOrder(env, "rotor", spec(2));
    const second = await env.driver.until(
      env.tenantNs,
      "rotor",
      "generation 2",
      (o) => o?.status?.passwordGeneration === 2 && isReady(o),
    );
    const v2 = await delivered();
    expect(v2["username"]).toBe(`${vhostName(key())}-v2`);
    expect(second?.status?.username).toBe(v2["username"]);
    expect(second?.status?.previousPasswordGeneration).toBe(1);
    // The grace period (5s) runs from the Secret's switch, which is the rotation's pass or a later
    // one: never shorter than 5s, longer by the passes in between.
    const grace =
      Date.parse(second?.status?.previousPasswordDeleteAt ?? "") -
      Date.parse(second?.status?.lastRotation ?? "");
    expect(grace).toBeGreaterThanOrEqual(5_000);
    expect(grace).toBeLessThan(15_000);
    expect(second?.status?.nextRotation).toBeUndefined();
    // During the grace period both users log in.
    expect(await amqpLogin(v1["transport_url"] ?? "")).toBe(true);
    expect(await amqpLogin(v2["transport_url"] ?? "")).toBe(true);

    const swept = await env.driver.until(
      env.tenantNs,
      "rotor",
      "the sweep after the grace period",
      (o) => o?.status?.previousPasswordGeneration === undefined,
      30_000,
    );
    expect(swept?.status?.previousPasswordDeleteAt).toBeUndefined();
    expect(isReady(swept)).toBe(true);
    expect(await amqpLogin(v1["transport_url"] ?? "")).toMatch(/ACCESS.REFUSED/);
    expect(await amqpLogin(v2["transport_url"] ?? "")).toBe(true);
    expect(await count("users")).toBe(1);
    expect(await count("permissions")).toBe(1);
    const passwordSecrets = await env.cluster.core.listNamespacedSecret({
      namespace: env.cpNs,
      labelSelector: childSelector(RABBITMQ_NAMING, key()),
    });
    expect(passwordSecrets.items.map((s) => s.metadata?.name)).toEqual([
      `${vhostName(key())}-vhost-password-v2`,
    ]);
  });

  it("does not switch to a successor the broker does not accept, and says why", async () => {
    const successor = `${vhostName(key())}-v3`;
    env.driver.standIn.phantomUsers.add(successor);
    await applyOrder(env, "rotor", spec(3));
    const held = await env.driver.until(env.tenantNs, "rotor", "the refused switch", (o) =>
      (condition(o, "VhostReady")?.message ?? "").includes("is not switched to yet"),
    );
    const message = condition(held, "VhostReady")?.message ?? "";
    expect(message).toContain(`user "${successor}"`);
    expect(message).toMatch(/the broker holds no user/);
    expect(held?.status?.passwordGeneration).toBe(2);
    const still = await delivered();
    expect(still["username"]).toBe(`${vhostName(key())}-v2`);
    expect(await amqpLogin(still["transport_url"] ?? "")).toBe(true);

    // The broker learns the user after all: the next pass switches.
    const secret = await env.cluster.core.readNamespacedSecret({
      namespace: env.cpNs,
      name: `${vhostName(key())}-vhost-password-v3`,
    });
    secrets.add(decode(secret.data?.["password"]));
    await broker("PUT", `/api/users/${encodeURIComponent(successor)}`, {
      password: decode(secret.data?.["password"]),
      tags: "",
    });
    await broker(
      "PUT",
      `/api/permissions/${encodeURIComponent(vhostName(key()))}/${encodeURIComponent(successor)}`,
      {
        configure: ".*",
        write: ".*",
        read: ".*",
      },
    );
    const third = await env.driver.until(
      env.tenantNs,
      "rotor",
      "generation 3",
      (o) => o?.status?.passwordGeneration === 3 && isReady(o),
    );
    expect(third?.status?.username).toBe(successor);
    expect(await amqpLogin((await delivered())["transport_url"] ?? "")).toBe(true);
  });

  it("writes no password or transport URL into conditions, events or logs", async () => {
    const order = await env.driver.order(env.tenantNs, "rotor");
    const texts = [
      JSON.stringify(order?.status ?? {}),
      JSON.stringify(env.driver.events),
      env.driver.logs.join(""),
      env.driver.errors.join("\n"),
    ];
    expect(env.driver.events.some((e) => e.reason === "Rotated")).toBe(true);
    expect(secrets.size).toBeGreaterThanOrEqual(5);
    for (const secret of secrets) for (const text of texts) expect(text.includes(secret)).toBe(false);
  });
});
