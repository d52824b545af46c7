// Moving a ControlPlane's tenants to another broker, through two operator processes with leader election
// at the default timings: ten orders are delivered on the 3.10 broker, a prober per order logs in with
// the delivered Secret every second, one consumer stays connected with an old credential, and the
// ControlPlane's bus is pointed at the 4.3 broker. Every order ends delivered on the new broker with no
// refused login; the old users go only after their grace period and once their connections close; the
// old vhosts are kept (Retain, with their messages) or removed (Delete). The leader is killed mid-way.
// Then the bus is pointed at a broker that cannot be reached: the orders stay where they are and say
// why, and come back whole when the bus is changed back.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlane, createManagedBus, type LocalBroker } from "../harness/world/managed-bus.ts";
import { userName, vhostName } from "../src/orders/rabbitmq/naming.ts";
import { localNode } from "../harness/world/local-brokers.ts";
import { holdConnection, LoginProber, type HeldConnection } from "../harness/probes/login-prober.ts";
import { holdOperatorLock } from "../harness/operator/operator-process.ts";
import { ReplicaPair } from "../harness/operator/replica-pair.ts";
import { scratchFolder } from "../harness/world/scratch.ts";
import {
  applyOrder,
  childNames,
  condition,
  createWorld,
  destroyWorld,
  isReady,
  managementApi,
  readOrder,
  readSecret,
  waitForOrder,
  worldEvents,
  type World,
} from "../harness/world/world.ts";

const OLD = localNode("rabbitmq-2");
const NEW = localNode("rabbitmq");
const NEW_BUS = "rabbitmq-4";
const UNREACHABLE_BUS = "rabbitmq-nowhere";
const ORDERS = Array.from({ length: 10 }, (_, i) => `svc-${i}`);
const retained = (name: string) => Number(name.slice(4)) % 2 === 0;
const HELD = "svc-1";
const GRACE_S = 20;

const exists = async (broker: LocalBroker, path: string) =>
  (await managementApi(broker, "GET", path)).status === 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`moving a ControlPlane's orders from RabbitMQ ${OLD.version} to ${NEW.version}, two replicas`, () => {
  let world: World | undefined;
  const probers = new Map<string, LoginProber>();
  let held: HeldConnection | undefined;
  const key = (name: string) => ({ cluster: "", namespace: world?.tenantNs ?? "", name });

  const logs = scratchFolder("vb-bus-migration-", "bus-migration: the replicas' logs");
  const lease = `vb-busmig-${Date.now().toString(36)}`;
  const replicas = new ReplicaPair({
    lease,
    workdir: logs.path,
    options: () => ({ args: ["--sweep-hold=3m"] }),
    log: () => undefined,
  });

  beforeAll(async () => {
    world = await createWorld("busmig", { broker: OLD.broker });
    await createManagedBus(world.cluster.config, world.cpNs, NEW.broker, NEW_BUS);
    await holdOperatorLock();
    await replicas.startBoth();
    await replicas.leader();
  }, 120_000);

  afterAll(async () => {
    try {
      await held?.close();
      for (const prober of probers.values()) await prober.stop();
      await destroyWorld(world, 120_000);
    } finally {
      await replicas.stopBoth();
      if (world) {
        await world.cluster.config
          .makeApiClient(k8s.CoordinationV1Api)
          .deleteNamespacedLease({ name: lease, namespace: "default" })
          .catch(() => undefined);
        // The vhosts Retain kept: on the old broker after the move, on the new one after the teardown.
        for (const name of ORDERS) {
          const vhost = encodeURIComponent(vhostName(key(name)));
          for (const broker of [OLD.broker, NEW.broker])
            await managementApi(broker, "DELETE", `/api/vhosts/${vhost}`).catch(() => undefined);
        }
      }
      logs.release();
    }
  }, 240_000);

  it("delivers every order on the new broker without a refused login, sweeping the old users after their grace and their last connection", async () => {
    if (!world) throw new Error("no world");
    const w = world;
    for (const name of ORDERS)
      await applyOrder(w, name, {
        rotation: { gracePeriod: `${GRACE_S}s` },
        deletionPolicy: retained(name) ? "Retain" : "Delete",
      });
    for (const name of ORDERS) {
      const ready = await waitForOrder(w, name, "delivered on the old broker", isReady, 120_000);
      expect(ready?.status?.backend).toBe("rabbitmq");
      expect(ready?.status?.port).toBe(OLD.broker.amqpPort);
    }

    // A durable queue of a Retain order's old vhost holds a message at the switch.
    const keptVhost = encodeURIComponent(vhostName(key("svc-0")));
    expect(
      (await managementApi(OLD.broker, "PUT", `/api/queues/${keptVhost}/kept`, { durable: true })).ok,
    ).toBe(true);
    const published = await managementApi(
      OLD.broker,
      "POST",
      `/api/exchanges/${keptVhost}/amq.default/publish`,
      {
        properties: { delivery_mode: 2 },
        routing_key: "kept",
        payload: "before the move",
        payload_encoding: "string",
      },
    );
    expect(((await published.json()) as { routed: boolean }).routed).toBe(true);

    for (const name of ORDERS)
      probers.set(
        name,
        new LoginProber({
          core: w.cluster.core,
          namespace: w.tenantNs,
          order: name,
          intervalMs: 1_000,
          maxDurationMs: 600_000,
        }).start(),
      );
    held = await holdConnection(
      (await readSecret(w, w.tenantNs, `${HELD}-credentials`))["transport_url"] ?? "",
    );

    await createControlPlane(w.cluster.config, w.cpNs, "cp", [{ namespace: w.tenantNs }], {
      busName: NEW_BUS,
    });
    const switched = Date.now();

    // Each order switches to a user on the new broker and drains the old one.
    for (const name of ORDERS) {
      const moved = await waitForOrder(
        w,
        name,
        "delivered on the new broker",
        (o) => o?.status?.backend === NEW_BUS && o.status.passwordGeneration === 2,
        180_000,
      );
      const secret = await readSecret(w, w.tenantNs, `${name}-credentials`);
      expect(secret["port"]).toBe(String(NEW.broker.amqpPort));
      expect(secret["username"]).toBe(userName(key(name), 2));
      expect(moved?.status?.migration?.from).toBe("rabbitmq");
    }

    // Past the grace period, the held consumer keeps its old user on the old broker; the condition says so.
    const holding = await waitForOrder(
      w,
      HELD,
      "the sweep held by the connected consumer",
      (o) =>
        (condition(o, "VhostReady")?.message ?? "").includes(
          "is kept past its grace period while 1 connection",
        ),
      120_000,
    );
    // The status keeps whole seconds: the grace runs from the switch's second, up to 1 s before it.
    expect(Date.now() - switched).toBeGreaterThan((GRACE_S - 1) * 1000);
    expect(holding?.status?.migration).toMatchObject({ from: "rabbitmq", to: NEW_BUS, phase: "Draining" });
    expect(await exists(OLD.broker, `/api/users/${userName(key(HELD), 1)}`)).toBe(true);

    // Every other order completes: its old user swept, its old Vhost CR released.
    for (const name of ORDERS.filter((n) => n !== HELD)) {
      const done = await waitForOrder(
        w,
        name,
        "the migration completed",
        (o) => !o?.status?.migration,
        120_000,
      );
      expect(isReady(done)).toBe(true);
      expect(await exists(OLD.broker, `/api/users/${userName(key(name), 1)}`)).toBe(false);
    }
    await held.close();
    held = undefined;
    await waitForOrder(w, HELD, "the migration completed", (o) => !o?.status?.migration, 120_000);
    expect(await exists(OLD.broker, `/api/users/${userName(key(HELD), 1)}`)).toBe(false);

    // A few more logins with only the new users, then the counts.
    await sleep(3_000);
    for (const [name, prober] of probers) {
      const counts = await prober.stop();
      console.log(`${name}: ${prober.summary()}`);
      expect(counts.failureMessages).toEqual([]);
      expect([counts.authFailures, counts.otherFailures]).toEqual([0, 0]);
      expect(Object.keys(counts.successesByUser)).toEqual([userName(key(name), 1), userName(key(name), 2)]);
    }
    probers.clear();

    for (const name of ORDERS) {
      const vhost = encodeURIComponent(vhostName(key(name)));
      expect(await exists(NEW.broker, `/api/vhosts/${vhost}`)).toBe(true);
      expect(await exists(OLD.broker, `/api/vhosts/${vhost}`)).toBe(retained(name));
      // One Vhost CR left, on the new broker.
      const vhosts = await childNames(w, name, "vhosts");
      expect(vhosts).toHaveLength(1);
      const cr = (await w.custom.getNamespacedCustomObject({
        group: "rabbitmq.com",
        version: "v1beta1",
        plural: "vhosts",
        namespace: w.cpNs,
        name: vhosts[0] ?? "",
      })) as { spec: { rabbitmqClusterReference: { name: string } } };
      expect(cr.spec.rabbitmqClusterReference.name).toBe(NEW_BUS);
      expect(await childNames(w, name, "users")).toHaveLength(1);
    }
    // Retain kept the old vhost with its message.
    const queue = (await (
      await managementApi(OLD.broker, "GET", `/api/queues/${keptVhost}/kept`)
    ).json()) as {
      messages: number;
    };
    expect(queue.messages).toBe(1);

    // Each order said each step once.
    const events = await worldEvents(w);
    for (const reason of ["MigrationStarted", "MigrationSwitched", "MigrationCompleted"]) {
      const named = events.filter((e) => e.reason === reason).map((e) => e.involvedObject.name);
      expect(new Set(named), reason).toEqual(new Set(ORDERS));
    }
    const final = await readOrder(w, "svc-0");
    expect(final?.status?.backend).toBe(NEW_BUS);
  }, 900_000);

  it("stays on its broker while the new one cannot be reached, and comes back whole when the bus is changed back", async () => {
    if (!world) throw new Error("no world");
    const w = world;
    // A RabbitmqCluster whose broker refuses every connection.
    const nowhere = { ...NEW.broker, managementUrl: "http://127.0.0.1:1", amqpPort: 1 };
    await createManagedBus(w.cluster.config, w.cpNs, nowhere, UNREACHABLE_BUS);
    const before = new Map<string, string>();
    for (const name of ORDERS) {
      before.set(name, (await readSecret(w, w.tenantNs, `${name}-credentials`))["transport_url"] ?? "");
      probers.set(
        name,
        new LoginProber({
          core: w.cluster.core,
          namespace: w.tenantNs,
          order: name,
          intervalMs: 1_000,
        }).start(),
      );
    }
    await createControlPlane(w.cluster.config, w.cpNs, "cp", [{ namespace: w.tenantNs }], {
      busName: UNREACHABLE_BUS,
    });
    for (const name of ORDERS) {
      const waiting = await waitForOrder(
        w,
        name,
        "the move to the unreachable broker under way",
        (o) => o?.status?.migration?.to === UNREACHABLE_BUS,
        60_000,
      );
      expect(waiting?.status?.backend).toBe(NEW_BUS);
      expect(waiting?.status?.migration?.phase).toBe("Provisioning");
      expect(condition(waiting, "VhostReady")?.message).toContain(
        `moving from RabbitmqCluster "${NEW_BUS}" to "${UNREACHABLE_BUS}": the delivered user stays on "${NEW_BUS}"`,
      );
    }
    // A while on the unreachable broker: the delivered Secret does not move.
    await sleep(10_000);
    for (const name of ORDERS)
      expect((await readSecret(w, w.tenantNs, `${name}-credentials`))["transport_url"]).toBe(
        before.get(name),
      );

    // Changed back; the unreachable broker's RabbitmqCluster deleted, so that its Vhost CRs are let go of.
    await createControlPlane(w.cluster.config, w.cpNs, "cp", [{ namespace: w.tenantNs }], {
      busName: NEW_BUS,
    });
    await w.custom.deleteNamespacedCustomObject({
      group: "rabbitmq.com",
      version: "v1beta1",
      plural: "rabbitmqclusters",
      namespace: w.cpNs,
      name: UNREACHABLE_BUS,
    });
    for (const name of ORDERS) {
      const back = await waitForOrder(
        w,
        name,
        "back on its broker, nothing left on the other",
        (o) => isReady(o) && !o?.status?.migration,
        120_000,
      );
      expect(back?.status?.backend).toBe(NEW_BUS);
      expect(back?.status?.passwordGeneration).toBe(2);
      expect(await childNames(w, name, "vhosts")).toHaveLength(1);
      expect((await readSecret(w, w.tenantNs, `${name}-credentials`))["transport_url"]).toBe(
        before.get(name),
      );
    }
    for (const [name, prober] of probers) {
      const counts = await prober.stop();
      expect(counts.failureMessages, name).toEqual([]);
      expect([counts.authFailures, counts.otherFailures, counts.successes > 5], name).toEqual([0, 0, true]);
    }
    probers.clear();
    const redirected = (await worldEvents(w)).filter((e) => e.reason === "MigrationRedirected");
    expect(new Set(redirected.map((e) => e.involvedObject.name))).toEqual(new Set(ORDERS));
  }, 300_000);
});
