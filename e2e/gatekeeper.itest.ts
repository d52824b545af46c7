// Gatekeeper plugins in the operator process, on the real parts: start-up stops with exit 2 on a missing
// plugin and on a failing configure; order-quota refuses the third order of a namespace limited to two
// while the first two keep working; rotation-policy turns a 1-year interval into the platform maximum
// (20s) and the order rotates on that schedule; a plugin loaded from a file path runs. On a target
// cluster, whose tenant may write its orders' status, order-quota counts from the children on the
// management cluster: a second order whose status the tenant forged at creation is refused.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userName } from "../src/orders/rabbitmq/naming.ts";
import { amqpLogin } from "../harness/probes/login-prober.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import {
  applyOrder as applyTargetOrder,
  createTargetWorld,
  destroyTargetWorld,
  managementChildren,
  type TargetWorld,
} from "../harness/world/target-cluster.ts";
import {
  applyOrder,
  condition,
  createWorld,
  destroyWorld,
  isReady,
  readOrder,
  readSecret,
  waitForOrder,
  waitForOrderIn,
  type World,
} from "../harness/world/world.ts";

const spec = { rotation: { interval: "8760h", gracePeriod: "24h" }, deletionPolicy: "Delete" };
const at = (time: string | undefined) => Date.parse(time ?? "");

describe("gatekeeper plugins, operator process", () => {
  const dir = mkdtempSync(join(tmpdir(), "gatekeeper-e2e-"));
  let world: World | undefined;
  let operator: OperatorProcess | undefined;
  const w = (): World => {
    if (!world) throw new Error("no world");
    return world;
  };
  const plugin = (file: string, body: string) => {
    writeFileSync(
      join(dir, file),
      `export default { apiVersion: "gatekeeper.c5c3.io/v1", name: "${file.replace(".mjs", "")}", ${body} };\n`,
    );
    return join(dir, file);
  };

  beforeAll(async () => {
    world = await createWorld("gatek");
    await w().cluster.core.patchNamespace(
      { name: w().tenantNs, body: { metadata: { annotations: { "gatekeeper.c5c3.io/order-quota": "2" } } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
  }, 120_000);

  afterAll(async () => {
    try {
      await destroyWorld(world);
    } finally {
      await operator?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("stops start-up with exit 2, naming the plugin, when one is missing or its configure fails", async () => {
    await expect(
      OperatorProcess.start({ args: ["--gatekeeper-custom-plugins=./missing.mjs"], cwd: dir }),
    ).rejects.toThrow(
      /exited with 2:[\s\S]*gatekeeper plugin "\.\/missing\.mjs" \(custom\) cannot be loaded/,
    );
    const failing = plugin("licence.mjs", 'configure() { throw new Error("no licence for this cluster"); }');
    await expect(
      OperatorProcess.start({ args: [`--gatekeeper-default-plugins=${failing}`] }),
    ).rejects.toThrow(
      /exited with 2:[\s\S]*gatekeeper plugin "licence" \(default\): configure failed: no licence for this cluster/,
    );
  });

  it("refuses a third order over the quota, clamps the rotation schedule, and runs a plugin from a file", async () => {
    const audit = plugin(
      "file-audit.mjs",
      'validating: { RabbitMQVhost: { entry(context, order) { context.log.info({ order: order.metadata.name }, "file-audit saw an order"); } } }',
    );
    operator = await OperatorProcess.start({
      args: [`--gatekeeper-custom-plugins=order-quota,${audit}`],
      env: {
        VHOST_BROKER_ROTATION_POLICY_MAX_INTERVAL: "20s",
        VHOST_BROKER_ROTATION_POLICY_MAX_GRACE_PERIOD: "5s",
      },
      cwd: dir,
      logFile: join(dir, "operator.log"),
    });
    await applyOrder(w(), "first", spec);
    await applyOrder(w(), "second", spec);
    const first = await waitForOrder(w(), "first", "first Ready", isReady, 90_000);
    await waitForOrder(w(), "second", "second Ready", isReady, 90_000);

    await applyOrder(w(), "third", spec);
    const third = await waitForOrder(
      w(),
      "third",
      "the third order refused",
      (o) => condition(o, "Ready")?.reason === "GatekeeperRejected",
    );
    expect(condition(third, "Ready")?.status).toBe("False");
    expect(condition(third, "Ready")?.message).toMatch(
      new RegExp(
        `^gatekeeper plugin "order-quota" rejected this RabbitMQVhost: namespace ${w().tenantNs} may hold 2 RabbitMQVhost orders and holds 2`,
      ),
    );
    expect(third?.metadata?.finalizers ?? []).toEqual([]);

    // rotation-policy: the schedule is the platform's maximum; the tenant's spec stays as written.
    expect(at(first?.status?.nextRotation) - at(first?.status?.lastRotation)).toBe(20_000);
    expect(condition(first, "RotationPolicyApplied")).toMatchObject({ status: "True", reason: "Clamped" });
    expect(first?.spec.rotation).toEqual({ interval: "8760h", gracePeriod: "24h" });
    const key = { cluster: "", namespace: w().tenantNs, name: "first" };
    const rotated = await waitForOrder(
      w(),
      "first",
      "the rotation on the clamped schedule",
      (o) => (o?.status?.passwordGeneration ?? 0) >= 2 && isReady(o),
      90_000,
    );
    expect(at(rotated?.status?.lastRotation)).toBeGreaterThanOrEqual(at(first?.status?.nextRotation));
    // The first two keep working: delivered, Ready, and the rotated credentials log in.
    const data = await readSecret(w(), w().tenantNs, "first-credentials");
    expect(data["username"]).toBe(userName(key, rotated?.status?.passwordGeneration ?? 0));
    expect(await amqpLogin(data["transport_url"] ?? "")).toEqual({ kind: "ok" });
    expect(isReady(await readOrder(w(), "second"))).toBe(true);

    const logs = operator.logs();
    expect(logs).toMatch(/"msg":"gatekeeper plugins loaded"/);
    expect(logs).toMatch(/"plugin":"file-audit".*"order":"first".*file-audit saw an order/);
    expect(logs).not.toContain(data["password"] ?? "no password read");
    const metrics = await operator.metrics();
    expect(metrics).toMatch(
      /vhost_broker_gatekeeper_plugin_invocations_total\{plugin="order-quota",group="custom",kind="RabbitMQVhost",hook="entry",result="threw"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /vhost_broker_gatekeeper_plugin_duration_seconds_count\{plugin="rotation-policy",kind="RabbitMQVhost",hook="exit"\} [1-9]/,
    );
  });
});

describe("order-quota against a tenant that writes its orders' status, target cluster, operator process", () => {
  let world: TargetWorld | undefined;
  let operator: OperatorProcess | undefined;
  const w = (): TargetWorld => {
    if (!world) throw new Error("no world");
    return world;
  };
  const tenant = () => w().assigned[0] ?? "";

  beforeAll(async () => {
    world = await createTargetWorld("gkq");
    // The target's chart grants no namespace read: the setting is the limit there.
    operator = await OperatorProcess.start({
      clusterSecretNamespace: world.secretNs,
      args: ["--gatekeeper-custom-plugins=order-quota"],
      env: { VHOST_BROKER_ORDER_QUOTA: "1" },
    });
  }, 5 * 60_000);

  afterAll(async () => {
    try {
      await destroyTargetWorld(world);
    } finally {
      await operator?.stop();
    }
  }, 180_000);

  it("refuses a second order whose status the tenant wrote at its creation", async () => {
    const at = { namespace: tenant() };
    await applyTargetOrder(w(), at, "first", spec);
    await waitForOrderIn(
      w().target,
      tenant(),
      "first",
      "first VhostReady",
      (o) => condition(o, "VhostReady")?.status === "True",
    );

    await applyTargetOrder(w(), at, "second", spec);
    const now = new Date().toISOString();
    const forged = (type: string) => ({
      type,
      status: "True",
      reason: "Provisioned",
      message: "written by the tenant",
      lastTransitionTime: now,
    });
    await w()
      .target.config.makeApiClient(k8s.CustomObjectsApi)
      .patchNamespacedCustomObjectStatus(
        {
          group: "c5c3.io",
          version: "v1alpha1",
          plural: "rabbitmqvhosts",
          namespace: tenant(),
          name: "second",
          body: { status: { conditions: [forged("VhostReady"), forged("Ready")] } },
        },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
    // A pass after the forgery: it keeps the forged VhostReady and refuses, or it admits (the finalizer).
    const second = await waitForOrderIn(
      w().target,
      tenant(),
      "second",
      "a pass over the forged status",
      (o) =>
        (o?.metadata?.finalizers ?? []).length > 0 ||
        (condition(o, "Ready")?.reason === "GatekeeperRejected" &&
          condition(o, "VhostReady")?.message === "written by the tenant"),
    );
    expect(second?.metadata?.finalizers ?? []).toEqual([]);
    expect(condition(second, "Ready")?.message).toMatch(
      /^gatekeeper plugin "order-quota" rejected this RabbitMQVhost: namespace \S+ may hold 1 RabbitMQVhost orders and holds 1/,
    );
    const key = { cluster: w().clusterName, namespace: tenant(), name: "second" };
    expect(await managementChildren(w(), key, "vhosts")).toEqual([]);
  });
});
