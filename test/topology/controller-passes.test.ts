// Whole reconcile passes of the seven kinds on the in-memory port and broker, with a fake clock:
// what each pass writes to Kubernetes and to the broker, and when it asks to run again.
import { beforeEach, describe, expect, it } from "vitest";
import {
  bindingKind,
  exchangeKind,
  permissionKind,
  policyKind,
  queueKind,
  rabbitmqClusterKind,
  secretKind,
  userKind,
  vhostKind,
  type KindRef,
} from "../../src/api/index.ts";
import type { KubeObject } from "../../src/runtime/port/kube-rest.ts";
import type { ControllerDeps } from "../../src/topology/index.ts";
import type { FakeClock } from "../../harness/fakes/fake-clock.ts";
import type { FakeKube } from "../../harness/fakes/fake-kube.ts";
import type { FakeBroker } from "./fake-broker.ts";
import {
  namespace,
  newPass,
  putManagedBus,
  readyOf,
  reconcileKind,
  ref,
  restartedDeps,
  serviceKind,
  settings,
} from "./pass-support.ts";

const name = "it";

interface Case {
  kind: KindRef;
  spec: Record<string, unknown>;
  /** Where the broker holds the object, from the object as the first declare left it. */
  path(object: KubeObject): string;
}

const cases: Case[] = [
  { kind: vhostKind, spec: { name: "v1" }, path: () => "/api/vhosts/v1" },
  {
    kind: userKind,
    spec: {},
    path: (user) => `/api/users/${(user["status"] as { username: string }).username}`,
  },
  {
    kind: permissionKind,
    spec: { user: "u1", vhost: "v1", permissions: { configure: "", write: ".*", read: ".*" } },
    path: () => "/api/permissions/v1/u1",
  },
  { kind: queueKind, spec: { name: "q1", vhost: "v1" }, path: () => "/api/queues/v1/q1" },
  { kind: exchangeKind, spec: { name: "x1", vhost: "v1" }, path: () => "/api/exchanges/v1/x1" },
  {
    kind: bindingKind,
    spec: { vhost: "v1", source: "x1", destination: "q1", destinationType: "queue", routingKey: "rk" },
    path: () => "/api/bindings/v1/e/x1/q/q1",
  },
  {
    kind: policyKind,
    spec: { name: "p1", vhost: "v1", pattern: "^q", definition: { "message-ttl": 1000 } },
    path: () => "/api/policies/v1/p1",
  },
];

describe.each(cases)("a $kind.kind, pass by pass", ({ kind, spec, path }) => {
  let clock: FakeClock;
  let kube: FakeKube;
  let broker: FakeBroker;
  let deps: ControllerDeps;
  const reconcile = () => reconcileKind(deps, kind, name);
  const stored = () => kube.read(kind, namespace, name);
  const ready = () =>
    ((stored()?.["status"] as { conditions?: { type: string }[] } | undefined)?.conditions ?? []).find(
      (c) => c.type === "Ready",
    );

  beforeEach(() => {
    ({ clock, kube, broker, deps } = newPass());
    kube.put(kind, { metadata: { name, namespace }, spec: { ...spec, ...ref } });
  });

  it("waits for its RabbitmqCluster, declares, repairs drift on the verification pass, and lets go after the broker delete", async () => {
    // No RabbitmqCluster yet: the finalizer, Ready False, and the waiting retry.
    expect(await reconcile()).toEqual({ requeueAfterMs: settings.waitingRetryMs });
    expect(kube.count("patchMetadata")).toBe(1);
    expect(kube.count("patchStatus")).toBe(1);
    expect(ready()).toMatchObject({ status: "False", reason: "FailedCreateOrUpdate" });
    expect(broker.requests).toEqual([]);

    // Still missing: the same status, so nothing is written.
    clock.advance(settings.waitingRetryMs);
    expect(await reconcile()).toEqual({ requeueAfterMs: settings.waitingRetryMs });
    expect(kube.writes()).toHaveLength(2);

    // Declared: Ready True with the generation, written once; the next look at the verification period.
    putManagedBus(kube);
    clock.advance(settings.waitingRetryMs);
    const writes = kube.writes().length;
    expect(await reconcile()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    expect(kube.writes().filter((w) => w.op === "patchStatus")).toHaveLength(2);
    expect(ready()).toMatchObject({ status: "True", reason: "SuccessfulCreateOrUpdate" });
    expect(stored()?.["status"]).toMatchObject({ observedGeneration: 1 });
    expect(kube.writes().length - writes).toBe(kind === userKind ? 2 : 1); // a User's Secret
    const where = path(stored() ?? {});
    expect(broker.has(where)).toBe(true);
    const declares = broker.requests.filter((r) => r.endsWith(where) && !r.startsWith("GET")).length;

    // Before the verification is due: no broker request, no write, a requeue at the due time.
    const requests = broker.requests.length;
    const before = kube.writes().length;
    clock.advance(60_000);
    expect(await reconcile()).toEqual({ requeueAfterMs: settings.verificationPeriodMs - 60_000 });
    expect(broker.requests).toHaveLength(requests);
    expect(kube.writes()).toHaveLength(before);

    // Removed on the broker: the verification pass declares it again, and the status stays as it is.
    broker.remove(where);
    clock.advance(settings.verificationPeriodMs);
    expect(await reconcile()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    expect(broker.has(where)).toBe(true);
    expect(broker.requests.filter((r) => r.endsWith(where) && !r.startsWith("GET")).length).toBe(
      declares + 1,
    );
    expect(kube.writes()).toHaveLength(before);

    // Deleted: the broker delete, then the finalizer released, and the object is gone.
    await kube.delete(kind, { namespace, name });
    expect(stored()?.metadata?.deletionTimestamp).toBeDefined();
    expect(await reconcile()).toEqual({});
    expect(broker.has(where)).toBe(false);
    expect(broker.requests.some((r) => r.startsWith("DELETE"))).toBe(true);
    expect(kube.count("removeFinalizer")).toBe(1);
    expect(kube.count("patchStatus")).toBe(2);
    expect(stored()).toBeUndefined();

    expect(await reconcile()).toEqual({});
    expect(kube.count("removeFinalizer")).toBe(1);
  });

  // A broker away for now (its default-user Secret or Service missing, scaled to zero) may still hold
  // the object (a user with a working password): the deletion waits for it, and says how to let go.
  it.each([
    {
      what: "its default-user Secret is missing",
      away: () => kube.remove(secretKind, namespace, "rmq-default-user"),
      reason: `RabbitmqCluster ${namespace}/rmq: Secret ${namespace}/rmq-default-user not found`,
    },
    {
      what: "its Service is missing",
      away: () => kube.remove(serviceKind, namespace, "rmq"),
      reason: `RabbitmqCluster ${namespace}/rmq: Service ${namespace}/rmq not found`,
    },
    {
      what: "it is scaled to zero",
      away: () => putManagedBus(kube, { replicas: 0 }),
      reason: `RabbitmqCluster ${namespace}/rmq is scaled to zero`,
    },
  ])(
    "keeps its finalizer while $what, says why, and deletes on the broker once it is back",
    async ({ away, reason }) => {
      const finalizer = `deletion.finalizers.${kind.plural}.rabbitmq.com`;
      putManagedBus(kube);
      expect(await reconcile()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
      const where = path(stored() ?? {});
      expect(broker.has(where)).toBe(true);

      away();
      await kube.delete(kind, { namespace, name });
      expect(await reconcile()).toEqual({ requeueAfterMs: settings.waitingRetryMs });
      const held = stored();
      expect(held?.metadata?.finalizers).toEqual([finalizer]);
      expect(readyOf(held)).toMatchObject({
        status: "False",
        reason: "FailedDelete",
        message: `${reason}: the ${kind.kind} is deleted on the broker once that is resolved; to leave it on the broker instead, remove the finalizer ${finalizer}`,
      });
      expect(kube.count("removeFinalizer")).toBe(0);
      expect(broker.has(where)).toBe(true);
      expect(broker.requests.some((r) => r.startsWith("DELETE"))).toBe(false);

      // Still away: the same status, so nothing is written.
      const writes = kube.writes().length;
      clock.advance(settings.waitingRetryMs);
      expect(await reconcile()).toEqual({ requeueAfterMs: settings.waitingRetryMs });
      expect(kube.writes()).toHaveLength(writes);

      putManagedBus(kube);
      expect(await reconcile()).toEqual({});
      expect(broker.has(where)).toBe(false);
      expect(stored()).toBeUndefined();
    },
  );

  it("releases its finalizer without the broker once its RabbitmqCluster is gone", async () => {
    putManagedBus(kube);
    expect(await reconcile()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    const where = path(stored() ?? {});
    const requests = broker.requests.length;

    kube.remove(rabbitmqClusterKind, namespace, "rmq");
    await kube.delete(kind, { namespace, name });
    expect(await reconcile()).toEqual({});
    expect(kube.count("removeFinalizer")).toBe(1);
    expect(stored()).toBeUndefined();
    // The broker was not asked: it still holds the object.
    expect(broker.requests).toHaveLength(requests);
    expect(broker.has(where)).toBe(true);
  });

  it("after a restart, reads a Ready object back instead of declaring it, and declares what the broker lost", async () => {
    putManagedBus(kube);
    expect(await reconcile()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    const where = path(stored() ?? {});
    const declares = () => broker.requests.filter((r) => r.endsWith(where) && !r.startsWith("GET")).length;
    expect(declares()).toBe(1);

    // A new process: the same objects and broker, no memo. A read, no declaration, no write.
    const restarted = () => restartedDeps({ clock, kube, broker });
    let writes = kube.writes().length;
    deps = restarted();
    expect(await reconcile()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    expect(declares()).toBe(1);
    expect(kube.writes()).toHaveLength(writes);

    // Restarted again after the broker lost it: declared again.
    broker.remove(where);
    writes = kube.writes().length;
    deps = restarted();
    expect(await reconcile()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    expect(declares()).toBe(2);
    expect(broker.has(where)).toBe(true);
    expect(kube.writes()).toHaveLength(writes);
  });
});

describe("a Permission with userReference", () => {
  it("waits for the User's username, takes the User as its controller owner, then declares", async () => {
    const { kube, broker, deps } = newPass();
    putManagedBus(kube);
    const user = kube.put(userKind, { metadata: { name: "u", namespace }, spec: { ...ref } });
    kube.put(permissionKind, {
      metadata: { name: "p", namespace },
      spec: { userReference: { name: "u" }, vhost: "v1", permissions: { read: ".*" }, ...ref },
    });
    const reconcilePermission = () => reconcileKind(deps, permissionKind, "p");
    const permission = () => kube.read(permissionKind, namespace, "p");

    expect(await reconcilePermission()).toEqual({ requeueAfterMs: settings.waitingRetryMs });
    expect(permission()?.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: "User", name: "u", uid: user.metadata?.uid, controller: true }),
    ]);
    expect(kube.count("patchStatus")).toBe(1);
    expect(permission()?.["status"]).toMatchObject({
      conditions: [{ type: "Ready", status: "False", message: "User u has no status.username yet" }],
    });

    await reconcileKind(deps, userKind, "u");
    const username = (kube.read(userKind, namespace, "u")?.["status"] as { username: string }).username;
    expect(await reconcilePermission()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    expect(broker.has(`/api/permissions/v1/${username}`)).toBe(true);
    // The Permission's metadata written twice in all: its finalizer, and the owner reference once.
    expect(kube.writes().filter((w) => w.op === "patchMetadata" && w.kind === "Permission")).toHaveLength(2);
    expect(permission()?.["status"]).toMatchObject({ conditions: [{ type: "Ready", status: "True" }] });
  });

  it("declares again at once for a User made again, which the broker holds without the permission", async () => {
    const { kube, broker, deps } = newPass();
    putManagedBus(kube);
    kube.put(userKind, { metadata: { name: "u", namespace }, spec: { ...ref } });
    kube.put(permissionKind, {
      metadata: { name: "p", namespace },
      spec: { userReference: { name: "u" }, vhost: "v1", permissions: { read: ".*" }, ...ref },
    });
    const reconcilePermission = () => reconcileKind(deps, permissionKind, "p");
    await reconcilePermission();
    await reconcileKind(deps, userKind, "u");
    const username = (kube.read(userKind, namespace, "u")?.["status"] as { username: string }).username;
    await reconcilePermission();
    const path = `/api/permissions/v1/${username}`;
    expect(broker.count("PUT", path)).toBe(1);
    // The User deleted and made again under its name: the broker's user is new and holds no permission.
    const previous = kube.read(userKind, namespace, "u");
    kube.remove(userKind, namespace, "u");
    broker.remove(path);
    kube.put(userKind, {
      metadata: { name: "u", namespace },
      spec: { ...ref },
      status: previous?.["status"],
    });
    expect(await reconcilePermission()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    expect(broker.has(path)).toBe(true);
    expect(broker.count("PUT", path)).toBe(2);
    // The same User again: the memo holds, nothing is read or declared before the verification is due.
    const requests = broker.requests.length;
    await reconcilePermission();
    expect(broker.requests.length).toBe(requests);
  });
});

describe("without the RabbitmqCluster kind", () => {
  it("reads a reference to a RabbitmqCluster as gone: a deletion lets go without the broker", async () => {
    const { kube, broker, deps } = newPass();
    kube.notServed(rabbitmqClusterKind);
    kube.put(vhostKind, {
      metadata: { name: "v", namespace, finalizers: ["deletion.finalizers.vhosts.rabbitmq.com"] },
      spec: { name: "v", ...ref },
    });
    expect(await reconcileKind(deps, vhostKind, "v")).toEqual({ requeueAfterMs: settings.waitingRetryMs });
    await kube.delete(vhostKind, { namespace, name: "v" });
    expect(await reconcileKind(deps, vhostKind, "v")).toEqual({});
    expect(kube.read(vhostKind, namespace, "v")).toBeUndefined();
    expect(broker.requests).toEqual([]);
  });
});

describe("a Binding applied together with its Queue and Exchange", () => {
  const bindingPath = "/api/bindings/v1/e/x1/q/q1";
  let clock: FakeClock;
  let kube: FakeKube;
  let broker: FakeBroker;
  let deps: ControllerDeps;
  const reconcileBinding = () => reconcileKind(deps, bindingKind, "b");

  beforeEach(() => {
    ({ clock, kube, broker, deps } = newPass());
    putManagedBus(kube);
    kube.put(exchangeKind, { metadata: { name: "x", namespace }, spec: { name: "x1", vhost: "v1", ...ref } });
    kube.put(queueKind, { metadata: { name: "q", namespace }, spec: { name: "q1", vhost: "v1", ...ref } });
    kube.put(bindingKind, {
      metadata: { name: "b", namespace },
      spec: { vhost: "v1", source: "x1", destination: "q1", destinationType: "queue", ...ref },
    });
  });

  it("waits for them without a broker request or a status, and is declared once both are Ready", async () => {
    clock.advance(1_000);
    expect(await reconcileBinding()).toEqual({ requeueAfterMs: settings.verificationPeriodMs - 1_000 });
    expect(broker.requests).toEqual([]);
    expect(kube.count("patchStatus")).toBe(0);

    // The Exchange is Ready, the Queue not reconciled yet: still waiting.
    await reconcileKind(deps, exchangeKind, "x");
    expect(await reconcileBinding()).toEqual({ requeueAfterMs: settings.verificationPeriodMs - 1_000 });
    expect(broker.count("POST", bindingPath)).toBe(0);

    await reconcileKind(deps, queueKind, "q");
    expect(await reconcileBinding()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    expect(broker.has(bindingPath)).toBe(true);
    expect(kube.read(bindingKind, namespace, "b")?.["status"]).toMatchObject({
      conditions: [{ type: "Ready", status: "True" }],
    });
  });

  it("is declared whatever its ends say once it is older than the verification period", async () => {
    clock.advance(settings.verificationPeriodMs);
    expect(await reconcileBinding()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    expect(broker.count("POST", bindingPath)).toBe(1);
  });

  it("does not wait for an end object that was reconciled and failed", async () => {
    for (const [kind, name] of [
      [exchangeKind, "x"],
      [queueKind, "q"],
    ] as const) {
      const end = kube.read(kind, namespace, name);
      kube.put(kind, { ...end, status: { conditions: [{ type: "Ready", status: "False" }] } });
    }
    expect(await reconcileBinding()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    expect(broker.count("POST", bindingPath)).toBe(1);
  });

  it("does not wait for an end that no object here declares", async () => {
    kube.put(bindingKind, {
      metadata: { name: "b", namespace },
      spec: { vhost: "v1", source: "amq.direct", destination: "elsewhere", destinationType: "queue", ...ref },
    });
    expect(await reconcileBinding()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    expect(broker.count("POST", "/api/bindings/v1/e/amq.direct/q/elsewhere")).toBe(1);
  });
});
