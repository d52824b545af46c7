// The RabbitMQVhost order and the built-in topology controller together on the fake port and the fake
// broker: provision, rotate, sweep and tear down, with the topology controller's finalizers in play.
// Decisions only: the e2e suites run the same through the operator process against the real servers.
import { pino } from "pino";
import { expect, it } from "vitest";
import {
  controlPlaneKind,
  permissionKind,
  rabbitmqClusterKind,
  rabbitMQVhostKind,
  secretKind,
  userKind,
  vhostKind,
} from "../../src/api/index.ts";
import type { OrderDeps } from "../../src/orders/core/deps.ts";
import { reconcileOrder } from "../../src/orders/core/reconcile.ts";
import { SuccessorBackoff } from "../../src/orders/core/requeue.ts";
import { rabbitMQVhostOrder } from "../../src/orders/rabbitmq/kind.ts";
import { TransientError } from "../../src/runtime/base/errors.ts";
import { MemoryStore } from "../../harness/fakes/memory-store.ts";
import { base64, namespace, newPass, putManagedBus, reconcileKind } from "../topology/pass-support.ts";

it("an order is provisioned, rotated, swept and torn down with the topology controller's finalizers", async () => {
  const { clock, kube, broker, deps: topology } = newPass();
  putManagedBus(kube);
  const rmq = kube.read(rabbitmqClusterKind, namespace, "rmq");
  kube.put(rabbitmqClusterKind, {
    ...rmq,
    status: {
      ...(rmq?.["status"] as object),
      defaultUser: {
        secretReference: { name: "rmq-default-user" },
        serviceReference: { name: "rmq", namespace },
      },
      conditions: [{ type: "AllReplicasReady", status: "True" }],
    },
  });
  kube.put(secretKind, {
    metadata: { name: "rmq-default-user", namespace },
    data: {
      username: base64("admin"),
      password: base64("admin-password"),
      host: base64("rmq"),
      port: base64("5672"),
    },
  });
  kube.put(controlPlaneKind, {
    metadata: { name: "cp", namespace },
    spec: {
      namespaceAssignments: [{ namespace: "tenant" }],
      infrastructure: { messaging: { clusterRef: { name: "rmq" } } },
    },
  });
  const spec = (generation: number) => ({
    controlPlaneRef: { name: "cp", namespace },
    passwordGeneration: generation,
    rotation: { interval: "0s", gracePeriod: "2s" },
    deletionPolicy: "Retain",
  });
  kube.put(rabbitMQVhostKind, { metadata: { name: "t", namespace: "tenant" }, spec: spec(1) });
  const deps: OrderDeps = {
    management: kube,
    home: kube,
    store: new MemoryStore(),
    clock,
    log: pino({ level: "silent" }),
    events: { emit: () => undefined },
    settings: { brokerCheckTimeoutMs: 1_000, transientCapMs: 30_000, sweepHoldMs: 60_000 },
    backoff: new SuccessorBackoff(),
    connections: async () => ({ known: true, count: 0 }),
    strayAccounts: async () => ({ removed: [] }),
    successorCheck: async () => ({ accepted: true }),
  };
  const order = () => kube.read(rabbitMQVhostKind, "tenant", "t");
  const round = async () => {
    try {
      await reconcileOrder(rabbitMQVhostOrder(), deps, "", "tenant", "t");
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
    }
    for (const kind of [vhostKind, userKind, permissionKind]) {
      for (const object of kube.all(kind)) {
        await reconcileKind(topology, kind, object.metadata?.name ?? "").catch((error: unknown) => {
          if (!(error instanceof TransientError)) throw error;
        });
      }
    }
    clock.advance(1_000);
  };
  const until = async (what: string, done: () => boolean) => {
    for (let i = 0; i < 30; i++) {
      if (done()) return;
      await round();
    }
    throw new Error(`never ${what}: ${JSON.stringify(order()?.status ?? order()?.metadata)}`);
  };
  const status = () => (order()?.["status"] ?? {}) as Record<string, unknown>;

  await until("Ready", () => status()["passwordGeneration"] === 1);
  kube.put(rabbitMQVhostKind, { ...order(), spec: spec(2) });
  await until(
    "switched and swept",
    () => status()["passwordGeneration"] === 2 && status()["previousPasswordGeneration"] === undefined,
  );
  const users = () => broker.requests.filter((r) => r.startsWith("PUT /api/users/")).length;
  expect(users()).toBe(2);
  expect(broker.count("DELETE", `/api/users/${String(status()["username"]).replace(/-v2$/, "-v1")}`)).toBe(1);
  await kube.delete(rabbitMQVhostKind, { namespace: "tenant", name: "t" });
  await until("torn down", () => order() === undefined);
  expect(kube.all(userKind)).toEqual([]);
  expect(kube.all(vhostKind)).toEqual([]);
});
