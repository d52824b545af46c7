// The teardown's Events as the order controller says them, on the fake port: Deleting on the first pass
// of a deleted order, Deleted only on the pass that released the finalizer. A teardown held by
// SecretsOutOfReach asks for no requeue and removed nothing: it says Deleting, never Deleted.
import { beforeEach, describe, expect, it } from "vitest";
import { rabbitMQVhostKind } from "../../../src/api/index.ts";
import { orderController, type OrderControllerDeps } from "../../../src/orders/core/controller.ts";
import { rabbitMQVhostOrder } from "../../../src/orders/rabbitmq/kind.ts";
import type { ReconcileContext } from "../../../src/runtime/loop/controller.ts";
import { CP_NS, TENANT, clock, deps, events, kube } from "../pass-world.ts";
import { NAME, converge, order, setUp, world } from "./fixture.ts";

beforeEach(setUp);

/** The order controller itself on the fake port; each call is one pass, as its work queue runs it. */
function controllerPasses(): () => Promise<void> {
  const manager = { kube: () => kube, engagedClusters: () => [""], cachedList: () => [] };
  const controller = orderController(rabbitMQVhostOrder(), {
    manager: manager as unknown as OrderControllerDeps["manager"],
    pass: deps,
    clock,
    workers: 1,
  });
  const log = deps.log as unknown as ReconcileContext["log"];
  return async () => {
    await controller.reconcile(
      { cluster: "", namespace: TENANT, name: NAME },
      { log, signal: new AbortController().signal, queuedAt: Date.now() },
    );
  };
}

const teardownEvents = () => events.map((e) => e.reason).filter((r) => r.startsWith("Delet"));

describe("the teardown's Events, order controller", () => {
  it("says Deleting while Secrets out of reach hold the finalizer, and Deleted once it is released", async () => {
    world();
    await converge();
    deps.settings = { ...deps.settings, secretNamespaces: [TENANT] };
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    const controllerPass = controllerPasses();
    await controllerPass();
    await controllerPass();
    expect(order()?.metadata?.finalizers).toEqual(["c5c3.io/rabbitmqvhost-teardown"]);
    expect(teardownEvents()).toEqual(["Deleting"]);
    deps.settings = { ...deps.settings, secretNamespaces: [TENANT, CP_NS] };
    await controllerPass();
    expect(order()).toBeUndefined();
    expect(teardownEvents()).toEqual(["Deleting", "Deleted"]);
  });
});
