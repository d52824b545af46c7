// Shared set-up of the whole-pass tests on the in-memory port and broker: the RabbitmqCluster `rmq`
// as the cluster operator makes it, deps on a fake clock, and one pass of a kind.
import { pino } from "pino";
import { rabbitmqClusterKind, secretKind, type KindRef } from "../../src/api/index.ts";
import type { Result } from "../../src/runtime/loop/controller.ts";
import type { KubeObject } from "../../src/runtime/port/kube-rest.ts";
import {
  createControllerDeps,
  topologyControllerKinds,
  type ControllerDeps,
} from "../../src/topology/index.ts";
import { reconcileExternal } from "../../src/external/index.ts";
import { FakeClock } from "../../harness/fakes/fake-clock.ts";
import { FakeKube } from "../../harness/fakes/fake-kube.ts";
import { FakeBroker } from "./fake-broker.ts";
import { serveEverything } from "./ownership.ts";

export const namespace = "app";
export const settings = { verificationPeriodMs: 300_000, waitingRetryMs: 10_000, transientRetryMs: 30_000 };
export const ref = { rabbitmqClusterReference: { name: "rmq" } };
export const serviceKind = {
  group: "",
  version: "v1",
  plural: "services",
  kind: "Service",
  namespaced: true,
};
export const base64 = (text: string) => Buffer.from(text).toString("base64");

/** The RabbitmqCluster `rmq`, its default-user Secret and its Service; `spec` is merged into the cluster's. */
export function putManagedBus(kube: FakeKube, spec: Record<string, unknown> = {}): void {
  kube.put(rabbitmqClusterKind, {
    metadata: { name: "rmq", namespace },
    spec: { replicas: 1, ...spec },
    status: {
      binding: { name: "rmq-default-user" },
      defaultUser: { serviceReference: { name: "rmq", namespace } },
    },
  });
  kube.put(secretKind, {
    metadata: { name: "rmq-default-user", namespace },
    data: { username: base64("admin"), password: base64("admin-password") },
  });
  kube.put(serviceKind, {
    metadata: { name: "rmq", namespace },
    spec: { ports: [{ name: "management", port: 15672 }] },
  });
}

export function reconcileKind(
  deps: ControllerDeps,
  kind: KindRef,
  name: string,
  inNamespace = namespace,
): Promise<Result> {
  const entry = topologyControllerKinds.find((k) => k.kind.kind === kind.kind);
  if (!entry) throw new Error(`no kind ${kind.kind}`);
  return reconcileExternal(entry, deps, inNamespace, name);
}

export interface Pass {
  clock: FakeClock;
  kube: FakeKube;
  broker: FakeBroker;
  deps: ControllerDeps;
}

/** A fresh port, broker and clock, and deps that serve every object. */
export function newPass(): Pass {
  const clock = new FakeClock();
  const kube = new FakeKube({ now: () => new Date(clock.now()) });
  const broker = new FakeBroker();
  return { clock, kube, broker, deps: restartedDeps({ clock, kube, broker }) };
}

/** Deps of a new process on the same port, broker and clock: nothing in memory. */
export function restartedDeps({ clock, kube, broker }: Omit<Pass, "deps">): ControllerDeps {
  return createControllerDeps(kube, {
    ownership: serveEverything,
    logger: pino({ level: "silent" }),
    clients: broker.clients(),
    clock,
    settings,
  });
}

/** The Ready condition of a stored object. */
export function readyOf(object: KubeObject | undefined) {
  const conditions = (object?.["status"] as { conditions?: Record<string, unknown>[] } | undefined)
    ?.conditions;
  return conditions?.find((c) => c["type"] === "Ready");
}
