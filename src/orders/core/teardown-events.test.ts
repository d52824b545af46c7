import { describe, expect, it } from "vitest";
import { teardownFinalizer } from "./naming.ts";
import { rabbitMQVhostOrder } from "../rabbitmq/kind.ts";
import { FakeKube } from "../../../test/support/fake-kube.ts";
import { TeardownEvents } from "./teardown-events.ts";

const kind = rabbitMQVhostOrder();
const request = { cluster: "", namespace: "tenant", name: "billing" };

function deletedOrder(kube: FakeKube, uid: string): void {
  kube.put(kind.gvk, {
    apiVersion: kind.gvk.apiVersion,
    kind: kind.gvk.kind,
    metadata: {
      name: request.name,
      namespace: request.namespace,
      uid,
      deletionTimestamp: new Date("2026-12-01T10:00:00Z"),
      finalizers: [teardownFinalizer(kind.naming)],
    },
  });
}

describe("the teardown's events", () => {
  it("says Deleting and Deleted once, also when a pass finds the released order still in its cache", async () => {
    const said: string[] = [];
    const events = new TeardownEvents({ emit: (_target, event) => void said.push(event.reason) });
    const kube = new FakeKube();
    deletedOrder(kube, "uid-1");

    const first = await events.before(kube, kind, request);
    expect(first).toBeDefined();
    await events.done(first!);
    // The cache has not caught up with the released finalizer: the next pass sees the same order.
    const stale = await events.before(kube, kind, request);
    expect(stale).toBeDefined();
    await events.done(stale!);
    expect(said).toEqual(["Deleting", "Deleted"]);

    // An order of the same name created again is another object, with its own teardown.
    deletedOrder(kube, "uid-2");
    await events.done((await events.before(kube, kind, request))!);
    expect(said).toEqual(["Deleting", "Deleted", "Deleting", "Deleted"]);
  });
});
