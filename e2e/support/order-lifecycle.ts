// The order's lifecycle with the operator as its users run it (`node src/main.ts`), whatever serves the
// Vhost, User and Permission children: the built-in topology controller (e2e/orders-operator.itest.ts)
// or the upstream messaging-topology-operator (e2e/upstream-backend.itest.ts).
import * as k8s from "@kubernetes/client-node";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlane, type LocalBroker } from "../../harness/world/managed-bus.ts";
import { backupPath, childSelector } from "../../src/orders/core/naming.ts";
import {
  permissionChildName,
  RABBITMQ_NAMING,
  userChildName,
  userName,
  vhostChildName,
  vhostName,
} from "../../src/orders/rabbitmq/naming.ts";
import { localEnv } from "../../harness/world/env.ts";
import { eventually, isApiError } from "../../harness/world/kube.ts";
import { amqpLogin, holdConnection } from "../../harness/probes/login-prober.ts";
import { OperatorProcess } from "../../harness/operator/operator-process.ts";
import { openBaoRead } from "../../harness/world/order-env.ts";
import {
  applyOrder,
  brokerApi,
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
} from "../../harness/world/world.ts";

const KEYS = ["transport_url", "host", "port", "username", "password", "vhost"];
const SPEC = { rotation: { interval: "0s", gracePeriod: "1m" } };
/** Leg 3's rotation: a short grace, so that the sweep's hold by a consumer is reached within the leg. */
const ROTATED = { interval: "0s", gracePeriod: "10s" };
const QUEUE = "lifecycle-retained";
const MESSAGE = "survives a Retain deletion";

/** Opens a confirm channel on the vhost of an oslo.messaging transport_url, runs `use`, and closes. */
async function withChannel<T>(transportUrl: string, use: (c: amqp.ConfirmChannel) => Promise<T>): Promise<T> {
  const url = new URL(transportUrl);
  const connection = await amqp.connect({
    protocol: "amqp",
    hostname: url.hostname,
    port: Number(url.port),
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    vhost: decodeURIComponent(url.pathname.slice(1)),
    heartbeat: 0,
  });
  connection.on("error", () => undefined);
  try {
    return await use(await connection.createConfirmChannel());
  } finally {
    await connection.close();
  }
}

/** The HTTP status of a KV v2 path's metadata: 404 once the path is purged, not only soft-deleted. */
async function openBaoMetadataStatus(path: string): Promise<number> {
  const env = localEnv();
  const res = await fetch(`${env.BAO_ADDR}/v1/kv-v2/metadata/${path}`, {
    headers: { "X-Vault-Token": env.BAO_TOKEN },
  });
  await res.arrayBuffer();
  return res.status;
}

/** What serves the order's Vhost, User and Permission children, beside the operator process. */
export interface TopologyBackend {
  /** Flags for the operator process, e.g. ["--topology-controller=false"]. */
  operatorArgs: string[];
  /** Started once the world exists (it may replace the world's CRDs), before the operator. */
  up(): Promise<void>;
  /** Stopped after the world is gone and the operator has stopped. */
  down(): Promise<void>;
  upTimeoutMs: number;
}

export interface LifecycleContext {
  world(): World;
  /** Every password, token and transport URL seen so far; the last test looks for them in the logs. */
  secrets: Set<string>;
}

export interface LifecycleOptions {
  /** Prefix of the world's namespaces. */
  prefix: string;
  /** The bus's broker; default: every test's, `rabbitmq`. */
  broker?: LocalBroker;
  /** Default: the operator's built-in topology controller. */
  backend?: TopologyBackend;
  /** More tests on the same world and operator, after leg 5 and before the check for secrets. */
  more?: (context: LifecycleContext) => void;
}

/**
 * The five legs of the original scenario with the operator process. The schedule is off (interval 0s):
 * leg 3 rotates by a raised passwordGeneration, with a consumer that holds the sweep past the grace
 * period (the schedule's own rotation is e2e/rotation-realtime.itest.ts). No password, token or transport URL reaches the
 * operator's logs, the order's status or the events.
 */
export function describeOrderLifecycle(title: string, options: LifecycleOptions): void {
  describe(title, () => {
    let world: World | undefined;
    let operator: OperatorProcess | undefined;
    /** Every password, token and transport URL the test saw; none may appear in the logs. */
    const secrets = new Set<string>();
    const started = Date.now();

    const w = (): World => {
      if (!world) throw new Error("no world");
      return world;
    };
    const key = (name = "workflow") => ({ cluster: "", namespace: w().tenantNs, name });
    const delivered = async (name = "workflow") => {
      const data = await readSecret(w(), w().tenantNs, `${name}-credentials`);
      for (const k of ["password", "transport_url"]) if (data[k]) secrets.add(data[k]);
      return data;
    };
    const deliveredMeta = async () =>
      (await w().cluster.core.readNamespacedSecret({ namespace: w().tenantNs, name: "workflow-credentials" }))
        .metadata;
    const brokerJson = async (path: string): Promise<{ status: number; body: unknown }> => {
      const res = await brokerApi(w(), "GET", path);
      return { status: res.status, body: res.ok ? await res.json() : await res.text() };
    };
    const deleteOrder = async (name: string) => {
      await w().custom.deleteNamespacedCustomObject({
        group: "c5c3.io",
        version: "v1alpha1",
        plural: "rabbitmqvhosts",
        namespace: w().tenantNs,
        name,
      });
      await waitForOrder(w(), name, `${name} torn down`, (o) => o === undefined, 60_000);
    };
    const lap = (what: string, since: number) =>
      console.log(`${what}: ${Date.now() - since} ms (file at ${Date.now() - started} ms)`);

    beforeAll(
      async () => {
        world = await createWorld(options.prefix, options.broker ? { broker: options.broker } : {});
        await options.backend?.up();
        operator = await OperatorProcess.start({ args: options.backend?.operatorArgs ?? [] });
        const env = localEnv();
        secrets.add(env.BAO_TOKEN).add(w().broker.adminPassword);
      },
      120_000 + (options.backend?.upTimeoutMs ?? 0),
    );

    afterAll(async () => {
      try {
        await destroyWorld(world);
      } finally {
        try {
          // A Retain deletion keeps `workflow`'s vhost; if the file failed between legs 4 and 5 no order
          // names it any more, so it is removed here (a 404 is fine).
          if (world)
            for (const name of ["workflow", "ephemeral"]) {
              await (await brokerApi(world, "DELETE", `/api/vhosts/${vhostName(key(name))}`)).arrayBuffer();
            }
        } finally {
          try {
            await operator?.stop();
          } finally {
            await options.backend?.down();
          }
        }
      }
    }, 180_000);

    it("leg 1: the vhost, user and permission on the broker, the backup and the delivered Secret", async () => {
      const t = Date.now();
      await applyOrder(w(), "workflow", SPEC);
      const order = await waitForOrder(w(), "workflow", "workflow Ready", isReady, 90_000);
      lap("leg 1: Ready", t);
      const vhost = vhostName(key());
      const status = order?.status ?? {};
      expect(status.vhost).toMatch(/^workflow-[0-9a-f]{8}$/);
      expect(status.vhost).toBe(vhost);
      expect(status.username).toBe(`${vhost}-v1`);
      expect(status.passwordGeneration).toBe(1);
      expect(status.nextRotation).toBeUndefined();
      expect(status.secretName).toBe("workflow-credentials");
      expect(status.secretKeys).toEqual(KEYS);
      expect(condition(order, "VhostReady")?.reason).toBe("VhostProvisioned");
      expect(condition(order, "DeliveryReady")?.reason).toBe("Delivered");
      expect(condition(order, "Ready")?.reason).toBe("AllReady");

      // Exactly one of each, made Ready by the topology backend.
      const expected = {
        vhosts: vhostChildName(key()),
        users: userChildName(key(), 1),
        permissions: permissionChildName(key(), 1),
      };
      for (const [plural, name] of Object.entries(expected)) {
        const children = await orderChildren(w(), "workflow", plural);
        expect(
          children.map((c) => c.metadata.name),
          plural,
        ).toEqual([name]);
        const ready = children[0]?.status?.conditions?.find((c) => c.type === "Ready");
        expect(ready, plural).toMatchObject({ status: "True", reason: "SuccessfulCreateOrUpdate" });
      }

      const data = await delivered();
      expect(Object.keys(data).sort()).toEqual([...KEYS].sort());
      expect(data["username"]).toBe(`${vhost}-v1`);
      expect(data["vhost"]).toBe(vhost);
      expect([data["host"], Number(data["port"])]).toEqual([w().broker.amqpHost, w().broker.amqpPort]);
      const meta = await deliveredMeta();
      expect(meta?.ownerReferences).toEqual([
        expect.objectContaining({
          kind: "RabbitMQVhost",
          name: "workflow",
          uid: order?.metadata.uid,
          controller: true,
        }),
      ]);

      // The OpenBao path holds the six keys, read back with the local environment's own token.
      expect(await openBaoRead(backupPath(RABBITMQ_NAMING, key(), w().cpNs))).toEqual(data);
      expect(await openBaoMetadataStatus(backupPath(RABBITMQ_NAMING, key(), w().cpNs))).toBe(200);
      expect(await amqpLogin(data["transport_url"] ?? "")).toEqual({ kind: "ok" });
      const permissions = await brokerJson(`/api/users/${encodeURIComponent(`${vhost}-v1`)}/permissions`);
      expect(permissions).toEqual({
        status: 200,
        body: [{ user: `${vhost}-v1`, vhost, configure: ".*", write: ".*", read: ".*" }],
      });
    }, 120_000);

    it("leg 2: an edited password is restored, a deleted Secret re-created, another's key kept", async () => {
      const before = await delivered();
      const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
      let t = Date.now();
      await w().cluster.core.patchNamespacedSecret(
        {
          namespace: w().tenantNs,
          name: "workflow-credentials",
          body: {
            data: {
              password: Buffer.from("tampered").toString("base64"),
              note: Buffer.from("mine").toString("base64"),
            },
          },
          fieldManager: "someone-else",
        },
        merge,
      );
      const restored = await eventually(
        "the delivered password restored",
        async () => {
          const data = await delivered();
          return data["password"] === before["password"] ? data : undefined;
        },
        60_000,
      );
      lap("leg 2: password restored", t);
      expect(restored["note"]).toBe("mine");
      expect(restored["transport_url"]).toBe(before["transport_url"]);

      const uid = (await readOrder(w(), "workflow"))?.metadata.uid;
      t = Date.now();
      await w().cluster.core.deleteNamespacedSecret({
        namespace: w().tenantNs,
        name: "workflow-credentials",
      });
      const again = await eventually(
        "the delivered Secret re-created",
        async () => {
          const meta = await deliveredMeta().catch((error: unknown) => {
            if (isApiError(error, 404)) return undefined;
            throw error;
          });
          return meta?.ownerReferences ? meta : undefined;
        },
        60_000,
      );
      lap("leg 2: Secret re-created", t);
      expect(again.ownerReferences).toEqual([
        expect.objectContaining({ kind: "RabbitMQVhost", name: "workflow", uid, controller: true }),
      ]);
      const data = await delivered();
      expect(data).toEqual(before);
    }, 150_000);

    it("leg 3: a raised generation is delivered, the superseded user works through its grace, is kept while a consumer holds it, then swept", async () => {
      const vhost = vhostName(key());
      const before = await delivered();
      const consumer = await holdConnection(before["transport_url"] ?? "");
      let t = Date.now();
      await applyOrder(w(), "workflow", { ...SPEC, passwordGeneration: 2, rotation: ROTATED });
      const second = await waitForOrder(
        w(),
        "workflow",
        "generation 2 delivered",
        (o) => o?.status?.passwordGeneration === 2 && o.status.previousPasswordDeleteAt !== undefined,
        60_000,
      );
      lap("leg 3: generation 2 delivered", t);
      const now = await delivered();
      expect(now["username"]).toBe(`${vhost}-v2`);
      expect(second?.status?.previousPasswordGeneration).toBe(1);
      // Both generations publish and consume during the grace period.
      expect(await amqpLogin(now["transport_url"] ?? "")).toEqual({ kind: "ok" });
      expect(await amqpLogin(before["transport_url"] ?? "")).toEqual({ kind: "ok" });

      // Past the grace period the superseded user stays while the consumer still uses it.
      const held = await waitForOrder(
        w(),
        "workflow",
        "the sweep held by the consumer",
        (o) => condition(o, "VhostReady")?.message?.includes("still uses it") === true,
        60_000,
      );
      expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(second?.status?.previousPasswordDeleteAt ?? ""));
      expect(condition(held, "VhostReady")?.message).toContain(
        `the superseded user "${vhost}-v1" is kept past its grace period while 1 connection still uses it`,
      );
      expect((await brokerJson(`/api/users/${encodeURIComponent(`${vhost}-v1`)}`)).status).toBe(200);

      t = Date.now();
      await consumer.close();
      await waitForOrder(
        w(),
        "workflow",
        "generation 1 swept",
        (o) => o?.status?.previousPasswordGeneration === undefined,
        60_000,
      );
      lap("leg 3: generation 1 swept after its consumer left", t);
      expect((await brokerJson(`/api/users/${encodeURIComponent(`${vhost}-v1`)}`)).status).toBe(404);
      expect((await amqpLogin(before["transport_url"] ?? "")).kind).toBe("auth");
      expect(await amqpLogin(now["transport_url"] ?? "")).toEqual({ kind: "ok" });
    }, 180_000);

    it("leg 4: Retain keeps the vhost and its message, Delete removes the vhost", async () => {
      const vhost = vhostName(key());
      const { transport_url: url = "" } = await delivered();
      await withChannel(url, async (channel) => {
        await channel.assertQueue(QUEUE, { durable: true });
        channel.sendToQueue(QUEUE, Buffer.from(MESSAGE), { persistent: true });
        await channel.waitForConfirms();
      });

      let t = Date.now();
      await deleteOrder("workflow");
      lap("leg 4: workflow torn down (Retain)", t);
      for (const plural of ["vhosts", "users", "permissions"]) {
        expect(await orderChildren(w(), "workflow", plural), plural).toEqual([]);
      }
      const cpSecrets = await w().cluster.core.listNamespacedSecret({
        namespace: w().cpNs,
        labelSelector: childSelector(RABBITMQ_NAMING, key()),
      });
      expect(cpSecrets.items).toEqual([]);
      await expect(deliveredMeta()).rejects.toMatchObject({ code: 404 });
      expect(await openBaoRead(backupPath(RABBITMQ_NAMING, key(), w().cpNs))).toBeUndefined();
      expect(await openBaoMetadataStatus(backupPath(RABBITMQ_NAMING, key(), w().cpNs))).toBe(404);
      for (const generation of [1, 2]) {
        expect(
          (await brokerJson(`/api/users/${encodeURIComponent(userName(key(), generation))}`)).status,
        ).toBe(404);
      }
      expect(await brokerJson(`/api/vhosts/${encodeURIComponent(vhost)}`)).toMatchObject({
        status: 200,
        body: { name: vhost },
      });
      // The management API's message counts lag the broker by its statistics interval.
      const queue = await eventually(
        "the retained queue to report its message",
        async () => {
          const { status, body } = await brokerJson(`/api/queues/${encodeURIComponent(vhost)}/${QUEUE}`);
          return status === 200 && (body as { messages?: number }).messages === 1 ? body : undefined;
        },
        30_000,
      );
      expect(queue).toMatchObject({ name: QUEUE, vhost, durable: true, messages: 1 });

      t = Date.now();
      await applyOrder(w(), "ephemeral", { ...SPEC, deletionPolicy: "Delete" });
      const ephemeral = await waitForOrder(w(), "ephemeral", "ephemeral Ready", isReady, 90_000);
      const gone = vhostName(key("ephemeral"));
      expect(ephemeral?.status?.vhost).toBe(gone);
      expect((await brokerJson(`/api/vhosts/${encodeURIComponent(gone)}`)).status).toBe(200);
      await delivered("ephemeral");
      await deleteOrder("ephemeral");
      lap("leg 4: ephemeral Ready and torn down (Delete)", t);
      expect((await brokerJson(`/api/vhosts/${encodeURIComponent(gone)}`)).status).toBe(404);
      expect(await openBaoMetadataStatus(backupPath(RABBITMQ_NAMING, key("ephemeral"), w().cpNs))).toBe(404);
    }, 180_000);

    it("leg 5: a re-created order reattaches; a withdrawn assignment freezes it; restored, Ready again", async () => {
      const vhost = vhostName(key());
      let t = Date.now();
      await applyOrder(w(), "workflow", SPEC);
      const order = await waitForOrder(w(), "workflow", "workflow Ready again", isReady, 90_000);
      lap("leg 5: re-created and Ready", t);
      expect(order?.status?.vhost).toBe(vhost);
      const before = await delivered();
      expect(before["vhost"]).toBe(vhost);
      // The new user reaches the queue a Retain deletion kept, with its message.
      const kept = await withChannel(before["transport_url"] ?? "", (channel) => channel.checkQueue(QUEUE));
      expect(kept.messageCount).toBe(1);
      const resourceVersion = (await deliveredMeta())?.resourceVersion;

      const { config } = w().cluster;
      t = Date.now();
      await createControlPlane(config, w().cpNs, "cp", []);
      const frozen = await waitForOrder(
        w(),
        "workflow",
        "NamespaceNotAssigned on both conditions",
        (o) =>
          ["VhostReady", "DeliveryReady"].every((c) => condition(o, c)?.reason === "NamespaceNotAssigned"),
        120_000,
      );
      lap("leg 5: frozen", t);
      expect(condition(frozen, "Ready")).toMatchObject({ status: "False", reason: "NotAllReady" });
      expect(await delivered()).toEqual(before);
      expect((await deliveredMeta())?.resourceVersion).toBe(resourceVersion);

      t = Date.now();
      await createControlPlane(config, w().cpNs, "cp", [{ namespace: w().tenantNs }]);
      const thawed = await waitForOrder(
        w(),
        "workflow",
        "Ready after the assignment is restored",
        isReady,
        120_000,
      );
      lap("leg 5: Ready after restoring the assignment", t);
      expect(thawed?.status?.vhost).toBe(vhost);
      expect(await delivered()).toEqual(before);
    }, 300_000);

    options.more?.({ world: w, secrets });

    it("writes no password, token or transport URL into the logs, the status or the events", async () => {
      if (!operator) throw new Error("no operator");
      // Two orders' passwords and URLs (workflow twice), the admin password and the OpenBao token.
      expect(secrets.size).toBeGreaterThanOrEqual(8);
      const logs = operator.logs();
      expect(logs).toContain("workflow");
      const texts = {
        logs,
        order: JSON.stringify(await readOrder(w(), "workflow")),
        events: JSON.stringify(await worldEvents(w())),
      };
      for (const [where, text] of Object.entries(texts)) {
        for (const secret of secrets) {
          for (const form of [secret, encodeURIComponent(secret)]) {
            expect(text.includes(form), `a secret in the ${where}`).toBe(false);
          }
        }
      }
    }, 30_000);
  });
}
