// Rotation decided from evidence, through the operator process on the real parts (the built-in topology
// controller on the local broker, OpenBao, the API server): a status wiped after a scheduled rotation
// deletes nothing the delivered Secret carries and never goes back; a delivery stalled by an admission
// policy while the successor's User is deleted keeps the delivered user working well past the grace
// period, with a status that names only what is delivered; and the sweep of a superseded user waits for
// its last consumer, up to --sweep-hold. A RabbitmqCluster scaled to 0 during a sweep leaves no user of
// the order behind once it is back. An order whose finalizer a tenant stripped leaves nothing behind.
// The operator runs as the chart deploys it: two replicas with leader election at the default timings.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseMetrics, sum } from "../harness/probes/prometheus.ts";
import { backupPath } from "../src/orders/core/naming.ts";
import { RABBITMQ_NAMING, userChildName, userName } from "../src/orders/rabbitmq/naming.ts";
import { eventually } from "../harness/world/kube.ts";
import { amqpLogin, holdConnection, LoginProber } from "../harness/probes/login-prober.ts";
import { holdOperatorLock, releaseOperatorLock } from "../harness/operator/operator-process.ts";
import { openBaoRead } from "../harness/world/order-env.ts";
import { stallDelivery, wipeStatus } from "../harness/chaos/order-faults.ts";
import { ReplicaPair } from "../harness/operator/replica-pair.ts";
import { scratchFolder } from "../harness/world/scratch.ts";
import {
  applyOrder,
  brokerApi,
  childNames,
  condition,
  createWorld,
  destroyWorld,
  isReady,
  orderChildren,
  readOrder,
  readSecret,
  waitForOrder,
  worldEvents,
  type World,
} from "../harness/world/world.ts";

const HOLD = "40s";
const HOLD_MS = 40_000;
const ORPHAN_DELAY_MS = 10_000;

describe("rotation from evidence, operator process", () => {
  let world: World | undefined;
  const w = (): World => {
    if (!world) throw new Error("no world");
    return world;
  };
  const key = (name: string) => ({ cluster: "", namespace: w().tenantNs, name });
  const delivered = (name: string) => readSecret(w(), w().tenantNs, `${name}-credentials`);
  const onBroker = async (user: string) =>
    (await brokerApi(w(), "GET", `/api/users/${encodeURIComponent(user)}`)).status === 200;
  const at = (time: string | undefined) => Date.parse(time ?? "");
  /** Strips the order's finalizers and deletes it: no teardown runs. */
  const stripAndDelete = async (name: string) => {
    const ref = {
      group: "c5c3.io",
      version: "v1alpha1",
      plural: "rabbitmqvhosts",
      namespace: w().tenantNs,
      name,
    };
    await w().custom.patchNamespacedCustomObject(
      { ...ref, body: { metadata: { finalizers: null } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await w().custom.deleteNamespacedCustomObject(ref);
    await eventually("the order gone", async () => ((await readOrder(w(), name)) ? undefined : true));
  };
  const brokerPut = async (path: string, body: unknown) => {
    const b = w().broker;
    const response = await fetch(new URL(path, b.managementUrl), {
      method: "PUT",
      headers: {
        authorization: `Basic ${Buffer.from(`${b.adminUsername}:${b.adminPassword}`).toString("base64")}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`PUT ${path}: HTTP ${response.status}`);
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

  const logs = scratchFolder("vb-rotation-evidence-", "rotation-evidence: the replicas' logs");
  const lease = `vb-rotev-${Date.now().toString(36)}`;
  const replicas = new ReplicaPair({
    lease,
    workdir: logs.path,
    options: () => ({ args: [`--sweep-hold=${HOLD}`, `--orphan-removal-delay=${ORPHAN_DELAY_MS / 1000}s`] }),
    log: () => undefined,
  });
  /** Both replicas started, one of them leading. */
  const startOperator = async () => {
    await replicas.startBoth();
    await replicas.leader();
  };

  beforeAll(async () => {
    world = await createWorld("rotev");
    // The replicas share this file's operator lock: another run's operator must not serve beside them.
    await holdOperatorLock();
    await startOperator();
  }, 120_000);

  afterAll(async () => {
    try {
      await destroyWorld(world);
    } finally {
      await replicas.stopBoth();
      await world?.cluster.config
        .makeApiClient(k8s.CoordinationV1Api)
        .deleteNamespacedLease({ name: lease, namespace: "default" })
        .catch(() => undefined);
      releaseOperatorLock();
      logs.release();
    }
  }, 120_000);

  it("keeps the delivered generation through a status wipe: 0 refused logins, never back", async () => {
    const name = "wiped";
    await applyOrder(w(), name, {
      rotation: { interval: "1m", gracePeriod: "20s" },
      deletionPolicy: "Delete",
    });
    const first = await waitForOrder(w(), name, "generation 1", (o) => isReady(o), 90_000);
    const seen: number[] = [];
    const watcher = setInterval(() => {
      void readOrder(w(), name).then((o) => {
        const g = o?.status?.passwordGeneration;
        if (g !== undefined) seen.push(g);
      });
    }, 500);
    const prober = new LoginProber({
      core: w().cluster.core,
      namespace: w().tenantNs,
      order: name,
      intervalMs: 1_000,
    });
    prober.start();
    try {
      await waitForOrder(
        w(),
        name,
        "generation 2 on schedule",
        (o) => o?.status?.passwordGeneration === 2 && o.status.previousPasswordDeleteAt !== undefined,
        at(first?.status?.nextRotation) - Date.now() + 30_000,
      );
      expect((await delivered(name))["username"]).toBe(userName(key(name), 2));

      // A restore without status, in the middle of generation 1's grace period.
      await wipeStatus(w().cluster, { plural: "rabbitmqvhosts", namespace: w().tenantNs, name });
      const wipedAt = Date.now();
      const again = await waitForOrder(
        w(),
        name,
        "the status rebuilt from the delivered Secret",
        (o) => o?.status?.passwordGeneration === 2 && isReady(o),
        30_000,
      );
      // Generation 1 gets a grace period from the pass that found the Secret; the schedule restarts.
      expect(again?.status?.previousPasswordGeneration).toBe(1);
      expect(at(again?.status?.previousPasswordDeleteAt)).toBeGreaterThanOrEqual(wipedAt + 19_000);
      expect(at(again?.status?.nextRotation)).toBeGreaterThan(wipedAt);
      expect(again?.status?.username).toBe(userName(key(name), 2));
      expect(await onBroker(userName(key(name), 2))).toBe(true);
      expect((await delivered(name))["username"]).toBe(userName(key(name), 2));

      await waitForOrder(
        w(),
        name,
        "generation 1 swept",
        (o) => o?.status?.passwordGeneration === 2 && o.status.previousPasswordGeneration === undefined,
        60_000,
      );
      expect(await onBroker(userName(key(name), 1))).toBe(false);
      expect(await onBroker(userName(key(name), 2))).toBe(true);
      await sleep(3_000);
    } finally {
      clearInterval(watcher);
      await prober.stop();
    }
    const counts = prober.snapshot();
    console.log(prober.summary());
    expect(counts.authFailures).toBe(0);
    expect(counts.otherFailures).toBe(0);
    expect(counts.successes).toBeGreaterThan(10);
    // The generation the status reports never goes back.
    expect(seen.length).toBeGreaterThan(10);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1] ?? 0);
  }, 240_000);

  it("keeps the delivered user past the grace period while its delivery stalls and its successor's User is lost", async () => {
    const name = "stalled";
    await applyOrder(w(), name, {
      rotation: { interval: "0s", gracePeriod: "10s" },
      deletionPolicy: "Delete",
    });
    await waitForOrder(w(), name, "generation 1", (o) => isReady(o), 90_000);
    const v1 = await delivered(name);

    // A policy engine refuses every update of the delivered Secret: the delivery stalls.
    const stall = await stallDelivery(w().cluster, w().tenantNs, `${name}-credentials`);
    try {
      await applyOrder(w(), name, {
        passwordGeneration: 2,
        rotation: { interval: "0s", gracePeriod: "10s" },
        deletionPolicy: "Delete",
      });
      const stalled = await waitForOrder(
        w(),
        name,
        "the accepted successor waiting for its delivery",
        (o) =>
          condition(o, "DeliveryReady")?.reason === "DeliveryError" &&
          (condition(o, "VhostReady")?.message ?? "").includes(
            "takes over once the delivered Secret carries it",
          ),
        60_000,
      );
      // The status names the user the Secret carries, and no grace period runs.
      expect(stalled?.status?.passwordGeneration).toBe(1);
      expect(stalled?.status?.username).toBe(userName(key(name), 1));
      expect(stalled?.status?.previousPasswordGeneration).toBeUndefined();
      expect(stalled?.status?.previousPasswordDeleteAt).toBeUndefined();
      expect(stalled?.status?.secretName).toBe(`${name}-credentials`);

      // A piece of the successor is lost while the delivery stalls.
      await w().custom.deleteNamespacedCustomObject({
        group: "rabbitmq.com",
        version: "v1beta1",
        plural: "users",
        namespace: w().cpNs,
        name: userChildName(key(name), 2),
      });
      // Three grace periods later the delivered user still logs in.
      await sleep(30_000);
      expect(await amqpLogin(v1["transport_url"] ?? "")).toEqual({ kind: "ok" });
      expect(await onBroker(userName(key(name), 1))).toBe(true);
      const honest = await readOrder(w(), name);
      expect(honest?.status?.passwordGeneration).toBe(1);
      expect(honest?.status?.username).toBe(userName(key(name), 1));
      expect(honest?.status?.previousPasswordGeneration).toBeUndefined();
      expect((await delivered(name))["username"]).toBe(userName(key(name), 1));
    } finally {
      await stall.release();
    }

    // The policy gone, the successor is delivered; only then does generation 1's grace period run.
    const switched = await waitForOrder(
      w(),
      name,
      "generation 2 delivered",
      (o) => o?.status?.passwordGeneration === 2 && isReady(o),
      60_000,
    );
    expect(switched?.status?.previousPasswordGeneration).toBe(1);
    // The grace period runs from the pass that saw the Secret carry generation 2, which can come a
    // second or two after the pass that stamped the switch (both in whole seconds).
    const grace = at(switched?.status?.previousPasswordDeleteAt) - at(switched?.status?.lastRotation);
    expect(grace).toBeGreaterThanOrEqual(10_000);
    expect(grace).toBeLessThanOrEqual(15_000);
    const v2 = await delivered(name);
    expect(v2["username"]).toBe(userName(key(name), 2));
    // The successor's User was made again: a new broker user, whose permission on the vhost was
    // declared again with it (a login opens the vhost, so a missing permission is a refusal).
    expect(await amqpLogin(v2["transport_url"] ?? "")).toEqual({ kind: "ok" });
    expect(await amqpLogin(v1["transport_url"] ?? "")).toEqual({ kind: "ok" });
  }, 240_000);

  it("leaves no user of the order on the broker but the live one when its RabbitmqCluster is scaled to 0 during a sweep", async () => {
    const name = "scaled";
    const spec = (passwordGeneration: number) => ({
      passwordGeneration,
      rotation: { interval: "0s", gracePeriod: "10s" },
      deletionPolicy: "Delete",
    });
    const scale = (replicas: number) =>
      w().custom.patchNamespacedCustomObject(
        {
          group: "rabbitmq.com",
          version: "v1beta1",
          plural: "rabbitmqclusters",
          namespace: w().cpNs,
          name: "rabbitmq",
          body: { spec: { replicas } },
        },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
    const orderUsers = async () => {
      const users = (await (await brokerApi(w(), "GET", "/api/users")).json()) as { name: string }[];
      const prefix = userName(key(name), 1).slice(0, -1);
      return users
        .map((u) => u.name)
        .filter((n) => n.startsWith(prefix))
        .sort();
    };
    await applyOrder(w(), name, spec(1));
    await waitForOrder(w(), name, "generation 1", (o) => isReady(o), 90_000);
    await applyOrder(w(), name, spec(2));
    await waitForOrder(
      w(),
      name,
      "generation 2",
      (o) => o?.status?.passwordGeneration === 2 && o.status.previousPasswordDeleteAt !== undefined,
      60_000,
    );
    try {
      // Scaled to zero while the sweep's delete of generation 1's User is on its way (the delete is
      // issued here at that moment: scaled to zero, the order's own passes wait for the Vhost).
      await scale(0);
      await w().custom.deleteNamespacedCustomObject({
        group: "rabbitmq.com",
        version: "v1beta1",
        plural: "users",
        namespace: w().cpNs,
        name: userChildName(key(name), 1),
      });
      const held = await eventually("the User kept with its finalizer", async () => {
        const users = await orderChildren(w(), name, "users");
        const old = users.find((u) => u.metadata.name === userChildName(key(name), 1));
        return old?.metadata.deletionTimestamp ? old : undefined;
      });
      await sleep(5_000);
      expect(held.metadata.finalizers).toContain("deletion.finalizers.users.rabbitmq.com");
      expect(await childNames(w(), name, "users")).toContain(userChildName(key(name), 1));
      expect(await orderUsers()).toEqual([userName(key(name), 1), userName(key(name), 2)]);
    } finally {
      await scale(1);
    }
    await waitForOrder(
      w(),
      name,
      "generation 1 swept",
      (o) => o?.status?.previousPasswordGeneration === undefined,
      60_000,
    );
    await eventually("only the live user on the broker", async () =>
      JSON.stringify(await orderUsers()) === JSON.stringify([userName(key(name), 2)]) ? true : undefined,
    );
    expect(await childNames(w(), name, "users")).toEqual([userChildName(key(name), 2)]);
  }, 180_000);

  it("removes the children, the broker user and the backup of an order whose finalizer was stripped", async () => {
    const name = "stripped";
    await applyOrder(w(), name, {
      rotation: { interval: "0s", gracePeriod: "10s" },
      deletionPolicy: "Delete",
    });
    await waitForOrder(w(), name, "generation 1", (o) => isReady(o), 90_000);
    const user = userName(key(name), 1);
    const path = backupPath(RABBITMQ_NAMING, key(name), w().cpNs);
    expect(await onBroker(user)).toBe(true);
    expect(await openBaoRead(path)).toBeDefined();
    // While the operator is down, a tenant strips the finalizer and deletes the order: no teardown runs.
    await replicas.stopBoth();
    await stripAndDelete(name);
    expect(await readOrder(w(), name)).toBeUndefined();
    // The delay runs from the leader's first look, which comes after this, whichever replica leads.
    const deleted = Date.now();
    await startOperator();
    await sleep(ORPHAN_DELAY_MS / 2);
    // Within the delay the order may come back: nothing is removed yet.
    expect(await onBroker(user)).toBe(true);
    await eventually(
      "the leftovers removed",
      async () => {
        const left = await Promise.all(
          ["vhosts", "users", "permissions"].map((p) => childNames(w(), name, p)),
        );
        const secrets = await w().cluster.core.listNamespacedSecret({
          namespace: w().cpNs,
          labelSelector: `c5c3.io/rabbitmqvhost-name=${name}`,
        });
        return left.flat().length === 0 && secrets.items.length === 0 ? true : undefined;
      },
      60_000,
    );
    console.log(`the stripped order's children removed ${Date.now() - deleted} ms after its deletion`);
    expect(await onBroker(user)).toBe(false);
    expect(await openBaoRead(path)).toBeUndefined();
    expect(Date.now() - deleted).toBeGreaterThanOrEqual(ORPHAN_DELAY_MS);
  }, 120_000);

  it("never hands a re-created order of the same name what the earlier one left behind", async () => {
    const name = "reborn";
    const spec = { rotation: { interval: "0s", gracePeriod: "10s" }, deletionPolicy: "Delete" };
    await applyOrder(w(), name, spec);
    await waitForOrder(w(), name, "the first order", (o) => isReady(o), 90_000);
    const earlier = await delivered(name);
    // While the operator is down, the order is deleted past its teardown and created again.
    await replicas.stopBoth();
    await stripAndDelete(name);
    await applyOrder(w(), name, spec);
    await startOperator();
    const again = await waitForOrder(
      w(),
      name,
      "the re-created order delivered",
      (o) => isReady(o) && o?.status?.passwordGeneration === 1,
      90_000,
    );
    const now = await delivered(name);
    expect(now["username"]).toBe(earlier["username"]);
    expect(now["password"]).not.toBe(earlier["password"]);
    expect(await amqpLogin(now["transport_url"] ?? "")).toEqual({ kind: "ok" });
    expect((await amqpLogin(earlier["transport_url"] ?? "")).kind).toBe("auth");
    const users = await orderChildren(w(), name, "users");
    expect(users.map((u) => u.metadata.annotations?.["c5c3.io/rabbitmqvhost-uid"])).toEqual([
      again?.metadata?.uid,
    ]);
  }, 180_000);

  it("holds the sweep while a consumer still uses the superseded user, sweeps once it goes, and removes a stray user", async () => {
    const name = "held";
    const spec = (passwordGeneration: number) => ({
      passwordGeneration,
      rotation: { interval: "0s", gracePeriod: "10s" },
      deletionPolicy: "Delete",
    });
    const heldGauge = async () =>
      sum(
        parseMetrics(await (await replicas.leading()).metrics()),
        "vhost_broker_order_sweep_held_connections",
        {
          namespace: w().tenantNs,
          name,
        },
      );
    await applyOrder(w(), name, spec(1));
    await waitForOrder(w(), name, "generation 1", (o) => isReady(o), 90_000);
    const consumer = await holdConnection((await delivered(name))["transport_url"] ?? "");
    // A user of the order's naming scheme that no User declares (its User's finalizer was stripped).
    const stray = userName(key(name), 7);
    await brokerPut(`/api/users/${encodeURIComponent(stray)}`, { password: "stray-password", tags: "" });
    await brokerPut(
      `/api/permissions/${encodeURIComponent((await delivered(name))["vhost"] ?? "")}/${encodeURIComponent(stray)}`,
      {
        configure: ".*",
        write: ".*",
        read: ".*",
      },
    );

    await applyOrder(w(), name, spec(2));
    const second = await waitForOrder(
      w(),
      name,
      "generation 2",
      (o) => o?.status?.passwordGeneration === 2 && o.status.previousPasswordDeleteAt !== undefined,
      60_000,
    );
    const deleteAt = at(second?.status?.previousPasswordDeleteAt);
    await sleep(deleteAt - Date.now() + 12_000);
    // Past the grace period, the superseded user stays: a consumer still uses it.
    expect(await onBroker(userName(key(name), 1))).toBe(true);
    const held = await readOrder(w(), name);
    expect(condition(held, "VhostReady")?.status).toBe("True");
    expect(condition(held, "VhostReady")?.message).toContain(
      `the superseded user "${userName(key(name), 1)}" is kept past its grace period while 1 connection still uses it`,
    );
    expect(held?.status?.previousPasswordGeneration).toBe(1);
    expect(
      (await worldEvents(w())).filter((e) => e.reason === "SweepHeld" && e.involvedObject.name === name),
    ).toHaveLength(1);
    expect(await heldGauge()).toBe(1);

    // The consumer goes: the sweep follows within a pass or two.
    const gone = Date.now();
    await consumer.close();
    await waitForOrder(
      w(),
      name,
      "generation 1 swept",
      (o) => o?.status?.previousPasswordGeneration === undefined,
      30_000,
    );
    console.log(`superseded user swept ${Date.now() - gone} ms after its last consumer left`);
    expect(await onBroker(userName(key(name), 1))).toBe(false);
    // The sweep also removed the stray user.
    expect(await onBroker(stray)).toBe(false);
    await eventually("the held series gone", async () => ((await heldGauge()) === 0 ? true : undefined));

    // A consumer that never goes: the sweep waits for the hold, then deletes the user, which closes it.
    const stubborn = await holdConnection((await delivered(name))["transport_url"] ?? "");
    await applyOrder(w(), name, spec(3));
    const third = await waitForOrder(
      w(),
      name,
      "generation 3",
      (o) => o?.status?.passwordGeneration === 3 && o.status.previousPasswordDeleteAt !== undefined,
      60_000,
    );
    const holdEnds = at(third?.status?.previousPasswordDeleteAt) + HOLD_MS;
    await sleep(holdEnds - Date.now() - 10_000);
    expect(await onBroker(userName(key(name), 2))).toBe(true);
    await waitForOrder(
      w(),
      name,
      "generation 2 swept at the hold's end",
      (o) => o?.status?.previousPasswordGeneration === undefined,
      40_000,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(holdEnds);
    expect(await onBroker(userName(key(name), 2))).toBe(false);
    await Promise.race([
      stubborn.closed,
      sleep(10_000).then(() => {
        throw new Error("the broker did not close the superseded user's connection");
      }),
    ]);
    expect(isReady(await readOrder(w(), name))).toBe(true);
  }, 240_000);
});
