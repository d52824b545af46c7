// The gates of the RabbitMQVhost order in whole passes on the fake Kubernetes port: what each one
// says, whether it writes anything, and the requeue it asks for.
import { beforeEach, describe, expect, it } from "vitest";
import {
  controlPlaneKind,
  rabbitmqClusterKind,
  rabbitMQVhostKind,
  secretKind,
  userKind,
  vhostKind,
} from "../../../src/api/index.ts";
import { reconcileOrder } from "../../../src/orders/core/reconcile.ts";
import { rabbitMQVhostOrder } from "../../../src/orders/rabbitmq/kind.ts";
import { passwordSecretName } from "../../../src/orders/rabbitmq/naming.ts";
import { TransientError } from "../../../src/runtime/base/errors.ts";
import type { KubeObject } from "../../../src/runtime/port/kube-rest.ts";
import { apiError } from "../../../harness/fakes/fake-kube.ts";
import { CP_NS, TENANT, b64, clock, deps, kube, store, unb64 } from "../pass-world.ts";
import { NAME, condition, converge, delivered, order, pass, setUp, topology, world } from "./fixture.ts";

beforeEach(setUp);

describe("the gates on the fake port", () => {
  it("ControlPlaneNotFound waits 10 s and adds no finalizer", async () => {
    world();
    kube.remove(controlPlaneKind, CP_NS, "cp");
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(condition("Ready")?.reason).toBe("NotAllReady");
    expect(condition("VhostReady")?.reason).toBe("ControlPlaneNotFound");
    expect(order()?.metadata?.finalizers).toBeUndefined();
  });

  it("an unassigned namespace freezes the order: nothing is provisioned, rotated or repaired", async () => {
    world();
    await converge();
    const cp = kube.read(controlPlaneKind, CP_NS, "cp") as KubeObject;
    kube.put(controlPlaneKind, {
      ...cp,
      spec: { ...(cp["spec"] as object), namespaceAssignments: [{ namespace: "someone-else" }] },
    });
    kube.remove(secretKind, TENANT, `${NAME}-credentials`);
    clock.advance(600_000);
    const before = kube.writes().length;
    expect(await pass()).toEqual({ requeueAfterMs: 60_000 });
    expect(condition("DeliveryReady")?.reason).toBe("NamespaceNotAssigned");
    // Only the status was written: no new user, no repaired Secret.
    expect(
      kube
        .writes()
        .slice(before)
        .map((w) => w.op),
    ).toEqual(["patchStatus"]);
    expect(delivered()).toBeUndefined();
  });

  it("a ControlPlane without messaging refuses the order, and a missing RabbitmqCluster waits 10 s", async () => {
    world();
    await pass();
    const cp = kube.read(controlPlaneKind, CP_NS, "cp") as KubeObject;
    kube.put(controlPlaneKind, { ...cp, spec: { namespaceAssignments: [{ namespace: TENANT }] } });
    expect(await pass()).toEqual({ requeueAfterMs: undefined });
    expect(condition("VhostReady")?.reason).toBe("MessagingNotDeclared");
    kube.put(controlPlaneKind, cp);
    kube.remove(rabbitmqClusterKind, CP_NS, "rabbitmq");
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(condition("VhostReady")?.reason).toBe("WaitingForMessagingCredentials");
  });

  it("SecretStoreNotReady is a transient failure retried after 10 s, and keeps what DeliveryReady said", async () => {
    world();
    await converge();
    store.healthState = { ready: false, state: "sealed", message: "OpenBao is sealed" };
    const failure = await reconcileOrder(rabbitMQVhostOrder(), deps, "", TENANT, NAME).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(TransientError);
    expect((failure as TransientError).retryAfterMs).toBe(10_000);
    expect(condition("VhostReady")?.reason).toBe("SecretStoreNotReady");
    expect(condition("DeliveryReady")?.reason).toBe("Delivered");
  });

  it("TopologyOperatorNotInstalled looks again after 10 minutes", async () => {
    world();
    kube.notServed(vhostKind);
    await pass();
    expect(await pass()).toEqual({ requeueAfterMs: 600_000 });
    expect(condition("VhostReady")?.reason).toBe("TopologyOperatorNotInstalled");
  });

  it("a foreign Secret of the delivered name is refused and looked at again after a minute", async () => {
    world();
    kube.put(secretKind, {
      metadata: { name: `${NAME}-credentials`, namespace: TENANT },
      data: { a: b64("b") },
    });
    const result = await converge().catch(() => pass());
    expect(condition("DeliveryReady")?.reason).toBe("DeliveryRefused");
    expect(result.requeueAfterMs).toBe(60_000);
  });

  it("never takes over a password Secret of the generation's name that the order did not create", async () => {
    world();
    await pass();
    await pass();
    topology();
    const name = passwordSecretName({ cluster: "", namespace: TENANT, name: NAME }, 1);
    kube.put(secretKind, { metadata: { name, namespace: CP_NS }, data: { password: b64("theirs") } });
    const result = await pass();
    expect(result.error).toContain(`Secret ${CP_NS}/${name}`);
    expect(condition("VhostReady")?.reason).toBe("VhostError");
    expect(unb64((kube.read(secretKind, CP_NS, name)?.["data"] as Record<string, string>)["password"])).toBe(
      "theirs",
    );
    expect(kube.all(userKind)).toEqual([]);
  });

  it("a failed child write reads VhostError, writes the status, then retries with backoff", async () => {
    world();
    await pass();
    kube.failNext("apply", vhostKind, apiError(500, "InternalError", "etcd timeout"));
    const result = await pass();
    expect(result.error).toContain("etcd timeout");
    expect(condition("VhostReady")).toMatchObject({ reason: "VhostError" });
    expect(condition("VhostReady")?.message).toContain("HTTP 500: etcd timeout");
  });

  it("a status write that conflicts is retried, never lost", async () => {
    world();
    await pass();
    kube.failNext("patchStatus", rabbitMQVhostKind, apiError(409, "Conflict"));
    const result = await pass();
    expect(result.error).toBeDefined();
    expect(order()?.status).toBeUndefined();
    await pass();
    expect(condition("VhostReady")?.reason).toBe("WaitingForVhost");
  });
});
