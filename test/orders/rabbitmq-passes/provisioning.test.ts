// Whole passes of the RabbitMQVhost order on the fake Kubernetes port, with a fake clock and an
// in-memory credential store: provisioned and delivered step by step, what a converged order costs,
// and the repair of a lost user. Decisions, not evidence: the e2e suites prove the same against the
// real servers, through the operator process.
import { beforeEach, describe, expect, it } from "vitest";
import { permissionKind, userKind, vhostKind } from "../../../src/api/index.ts";
import { topologyFinalizer } from "../../../src/rabbitmq/finalizer.ts";
import { WAITING_FALLBACK_MS } from "../../../src/orders/core/requeue.ts";
import { CP_NS, checks, clock, deps, events, kube, names, store } from "../pass-world.ts";
import {
  condition,
  converge,
  deliveredUser,
  order,
  pass,
  setUp,
  status,
  topology,
  world,
} from "./fixture.ts";

beforeEach(setUp);

describe("an order on the fake port", () => {
  it("is provisioned and delivered step by step, each pass asking for the requeue the policy names", async () => {
    world();
    // The finalizer first; its update brings the next pass, so no requeue and no status.
    expect(await pass()).toEqual({ requeueAfterMs: undefined });
    expect(order()?.metadata?.finalizers).toEqual(["c5c3.io/rabbitmqvhost-teardown"]);
    expect(order()?.status).toBeUndefined();

    expect(await pass()).toEqual({ requeueAfterMs: WAITING_FALLBACK_MS });
    expect(condition("VhostReady")?.reason).toBe("WaitingForVhost");
    topology();
    expect(await pass()).toEqual({ requeueAfterMs: WAITING_FALLBACK_MS });
    expect(condition("VhostReady")?.reason).toBe("WaitingForUser");
    expect(names(userKind)).toEqual([`${status()["vhost"] as string}-vhost-user-v1`]);
    topology();
    expect(await pass()).toEqual({ requeueAfterMs: WAITING_FALLBACK_MS });
    topology();
    // Checked, switched and delivered: the next pass is due at the rotation.
    expect(await pass()).toEqual({ requeueAfterMs: 180_000 });
    expect(condition("Ready")).toMatchObject({ status: "True", reason: "AllReady" });
    expect(checks.map((c) => c.username)).toEqual([`${status()["vhost"] as string}-v1`]);
    expect(deliveredUser()).toBe(`${status()["vhost"] as string}-v1`);
    expect(store.paths.size).toBe(1);
    expect(events.map((e) => e.reason)).toContain("UserProvisioned");
  });

  it("costs nothing once converged: no write to Kubernetes or OpenBao, no question to the broker, and a requeue at the rotation", async () => {
    world();
    await converge();
    const writes = kube.writes().length;
    const storeWrites = store.calls.write;
    let asked = 0;
    deps.connections = async () => {
      asked++;
      return { known: true, count: 0 };
    };
    clock.advance(30_000);
    expect(await pass()).toEqual({ requeueAfterMs: 150_000 });
    expect(kube.writes().length).toBe(writes);
    expect(store.calls.write).toBe(storeWrites);
    expect(asked).toBe(0);
  });

  it("applies the Vhost, User and Permission with their topology finalizer", async () => {
    world();
    await converge();
    for (const kind of [vhostKind, userKind, permissionKind])
      for (const child of kube.all(kind))
        expect(child.metadata?.finalizers, kind.kind).toEqual([topologyFinalizer(kind)]);
  });

  it("resolves passwordGeneration 0 and an empty deletionPolicy (an older CRD's) to 1 and Retain", async () => {
    world({ passwordGeneration: 0, deletionPolicy: "" });
    await converge();
    expect(status()["passwordGeneration"]).toBe(1);
    const vhost = kube.all(vhostKind)[0]?.["spec"] as { deletionPolicy?: string };
    expect(vhost.deletionPolicy).toBe("retain");
  });

  it("replaces a live user whose User was deleted", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    kube.remove(userKind, CP_NS, `${vhost}-vhost-user-v1`);
    const result = await pass();
    expect(condition("VhostReady")?.reason).toBe("WaitingForUser");
    expect(result.requeueAfterMs).toBeGreaterThanOrEqual(1_000);
    expect(names(userKind)).toContain(`${vhost}-vhost-user-v2`);
  });
});
