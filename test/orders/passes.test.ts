// Whole passes of the RabbitMQVhost order on the fake Kubernetes port, with a fake clock and an
// in-memory credential store: every gate and every leg, and the requeue each pass asks for. Decisions,
// not evidence: the e2e suites prove the same against the real servers, through the operator process.
import { beforeEach, describe, expect, it } from "vitest";
import {
  controlPlaneKind,
  permissionKind,
  rabbitmqClusterKind,
  rabbitMQVhostKind,
  secretKind,
  userKind,
  vhostKind,
} from "../../src/api/index.ts";
import type { OrderDeps, OrderEvent } from "../../src/orders/core/deps.ts";
import type { SuccessorLogin } from "../../src/orders/core/kind.ts";
import { OrphanSightings } from "../../src/orders/core/orphans.ts";
import { reconcileOrder } from "../../src/orders/core/reconcile.ts";
import { SuccessorBackoff, WAITING_FALLBACK_MS } from "../../src/orders/core/requeue.ts";
import { rabbitMQVhostOrder } from "../../src/orders/rabbitmq/kind.ts";
import { passwordSecretName } from "../../src/orders/rabbitmq/naming.ts";
import { BackupError } from "../../src/backup/store.ts";
import { TransientError } from "../../src/runtime/base/errors.ts";
import type { KubeObject } from "../../src/runtime/port/kube-rest.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { FakeKube, apiError } from "../support/fake-kube.ts";
import { MemoryStore } from "../support/memory-store.ts";

const TENANT = "tenant-a";
const CP_NS = "openstack";
const NAME = "workflow";
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
const unb64 = (s: string | undefined) => Buffer.from(s ?? "", "base64").toString("utf8");

let clock: FakeClock;
let kube: FakeKube;
let store: MemoryStore;
let events: OrderEvent[];
let checks: SuccessorLogin[];
let accept: boolean;
let deps: OrderDeps;
/** Every requeue a pass asked for in the test, to check the floors. */
let requeues: number[];

function world(spec: Record<string, unknown> = {}) {
  kube.put(controlPlaneKind, {
    metadata: { name: "cp", namespace: CP_NS },
    spec: {
      namespaceAssignments: [{ namespace: TENANT }],
      infrastructure: { messaging: { clusterRef: { name: "rabbitmq" } } },
    },
  });
  kube.put(rabbitmqClusterKind, {
    metadata: { name: "rabbitmq", namespace: CP_NS },
    spec: { replicas: 1 },
    status: {
      defaultUser: { secretReference: { name: "rabbitmq-default-user" } },
      conditions: [{ type: "AllReplicasReady", status: "True" }],
    },
  });
  kube.put(secretKind, {
    metadata: { name: "rabbitmq-default-user", namespace: CP_NS },
    data: {
      username: b64("admin"),
      password: b64("admin-pw"),
      host: b64("rabbitmq.openstack.svc"),
      port: b64("5672"),
    },
  });
  kube.put(rabbitMQVhostKind, {
    metadata: { name: NAME, namespace: TENANT },
    spec: {
      controlPlaneRef: { name: "cp", namespace: CP_NS },
      passwordGeneration: 1,
      rotation: { interval: "3m", gracePeriod: "1m" },
      deletionPolicy: "Retain",
      ...spec,
    },
  });
}

async function pass(): Promise<{ requeueAfterMs?: number | undefined; error?: string }> {
  try {
    const result = await reconcileOrder(rabbitMQVhostOrder(), deps, "", TENANT, NAME);
    if (result.requeueAfterMs !== undefined) requeues.push(result.requeueAfterMs);
    return result;
  } catch (error) {
    if (!(error instanceof TransientError)) throw error;
    return { error: error.message };
  }
}

/** The topology operator's part: every Vhost, User and Permission reported Ready for its generation. */
function topology(): void {
  for (const kind of [vhostKind, userKind, permissionKind]) {
    for (const object of kube.all(kind)) {
      if (object.metadata?.deletionTimestamp) continue;
      kube.put(kind, {
        ...object,
        status: {
          observedGeneration: object.metadata?.generation ?? 1,
          conditions: [{ type: "Ready", status: "True", reason: "SuccessfulCreateOrUpdate" }],
        },
      });
    }
  }
}

const order = () => kube.read(rabbitMQVhostKind, TENANT, NAME);
const condition = (type: string) =>
  (
    order()?.status as { conditions?: { type: string; status: string; reason: string; message: string }[] }
  )?.conditions?.find((c) => c.type === type);
const status = () => (order()?.status ?? {}) as Record<string, unknown>;
const delivered = () => kube.read(secretKind, TENANT, `${NAME}-credentials`);
const deliveredUser = () =>
  unb64((delivered()?.["data"] as Record<string, string> | undefined)?.["username"]);
const names = (kind: typeof userKind) =>
  kube
    .all(kind)
    .map((o) => o.metadata?.name ?? "")
    .sort();

/** The schedule's rotation due, and passes until its successor's User and Permission are Ready. */
async function rotationReady(): Promise<void> {
  clock.advance(180_000);
  await pass();
  topology();
  await pass();
  topology();
}

/** Passes with the topology operator's part between them, until the order is Ready. */
async function converge(): Promise<{ requeueAfterMs?: number | undefined }> {
  for (let i = 0; i < 10; i++) {
    const result = await pass();
    topology();
    if (condition("Ready")?.status === "True") return result;
  }
  throw new Error(`did not converge: ${JSON.stringify(status()["conditions"])}`);
}

beforeEach(() => {
  clock = new FakeClock(Date.parse("2030-01-01T00:00:00Z"));
  kube = new FakeKube({ now: () => new Date(clock.now()) });
  store = new MemoryStore();
  events = [];
  checks = [];
  accept = true;
  requeues = [];
  deps = {
    management: kube,
    home: kube,
    store,
    clock,
    log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    events: { emit: (_target, event) => void events.push(event) },
    settings: { brokerCheckTimeoutMs: 1_000, transientCapMs: 30_000, sweepHoldMs: 60_000 },
    backoff: new SuccessorBackoff(),
    connections: async () => ({ known: true, count: 0 }),
    successorCheck: async (login) => {
      checks.push(login);
      return accept ? { accepted: true } : { accepted: false, reason: "the broker refused a login (test)" };
    },
  };
});

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

  it("rotates on schedule, keeps the old user for the grace period, then sweeps it", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    clock.advance(180_000);
    // The rotation is due and under way: its children's events wake it, the fallback is a backstop.
    expect(await pass()).toEqual({ requeueAfterMs: WAITING_FALLBACK_MS });
    expect(names(userKind)).toEqual([`${vhost}-vhost-user-v1`, `${vhost}-vhost-user-v2`]);
    expect(deliveredUser()).toBe(`${vhost}-v1`);
    topology();
    await pass();
    topology();
    // Switched: the grace period's end is the next deadline.
    expect(await pass()).toEqual({ requeueAfterMs: 60_000 });
    expect(status()).toMatchObject({ passwordGeneration: 2, previousPasswordGeneration: 1 });
    expect(deliveredUser()).toBe(`${vhost}-v2`);
    expect(events.map((e) => e.reason)).toContain("Rotated");

    clock.advance(60_000);
    // The sweep is under way: the removal of the old User wakes the order, the fallback is a backstop.
    expect(await pass()).toEqual({ requeueAfterMs: WAITING_FALLBACK_MS });
    expect(names(userKind)).toEqual([`${vhost}-vhost-user-v2`]);
    expect(names(permissionKind)).toEqual([`${vhost}-vhost-permission-v2`]);
    const result = await pass();
    expect(status()["previousPasswordGeneration"]).toBeUndefined();
    expect(kube.all(secretKind).filter((s) => s.metadata?.name?.includes("password-v1"))).toEqual([]);
    expect(result).toEqual({ requeueAfterMs: 120_000 });
  });

  it("holds the sweep while connections use the superseded user, says so once, and sweeps when they go", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    const asked: string[] = [];
    let users = 2;
    const held = new Map<string, number | undefined>();
    deps.connections = async (username) => {
      asked.push(username);
      return { known: true, count: users };
    };
    deps.sweepHolds = { held: (o, n) => void held.set(`${o.namespace}/${o.name}`, n) };
    await rotationReady();
    await pass();
    expect(status()).toMatchObject({ passwordGeneration: 2, previousPasswordGeneration: 1 });
    // During the grace period nobody asks the broker.
    expect(asked).toEqual([]);
    clock.advance(60_000);
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(asked).toEqual([`${vhost}-v1`]);
    expect(names(userKind)).toEqual([`${vhost}-vhost-user-v1`, `${vhost}-vhost-user-v2`]);
    expect(condition("VhostReady")).toMatchObject({ status: "True", reason: "VhostProvisioned" });
    expect(condition("VhostReady")?.message).toContain(
      `the superseded user "${vhost}-v1" is kept past its grace period while 2 connections still use it`,
    );
    expect(held.get(`${TENANT}/${NAME}`)).toBe(2);
    clock.advance(10_000);
    await pass();
    expect(events.filter((e) => e.reason === "SweepHeld")).toHaveLength(1);
    users = 0;
    clock.advance(10_000);
    await pass();
    expect(names(userKind)).toEqual([`${vhost}-vhost-user-v2`]);
    expect(held.get(`${TENANT}/${NAME}`)).toBeUndefined();
    expect(condition("VhostReady")?.message).not.toContain("kept past its grace period");
  });

  it("sweeps at the end of the hold whoever still uses the superseded user", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    deps.connections = async () => ({ known: true, count: 1 });
    await rotationReady();
    await pass();
    clock.advance(60_000);
    await pass();
    expect(names(userKind)).toHaveLength(2);
    clock.advance(deps.settings.sweepHoldMs);
    await pass();
    expect(names(userKind)).toEqual([`${vhost}-vhost-user-v2`]);
  });

  it("keeps the delivered generation after a status wipe: nothing it carries goes, and it never goes back", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    await rotationReady();
    await pass();
    expect(deliveredUser()).toBe(`${vhost}-v2`);
    // A restore without status.
    const o = order();
    kube.put(rabbitMQVhostKind, { ...o, status: undefined } as never);
    await pass();
    expect(deliveredUser()).toBe(`${vhost}-v2`);
    expect(status()).toMatchObject({ passwordGeneration: 2, previousPasswordGeneration: 1 });
    expect(names(userKind)).toEqual([`${vhost}-vhost-user-v1`, `${vhost}-vhost-user-v2`]);
    // The predecessor gets a full grace period from the pass that found the Secret.
    expect(status()["previousPasswordDeleteAt"]).toBe(
      new Date(clock.now() + 60_000).toISOString().replace(".000Z", "Z"),
    );
    clock.advance(60_000);
    await pass();
    await pass();
    expect(names(userKind)).toEqual([`${vhost}-vhost-user-v2`]);
    expect(deliveredUser()).toBe(`${vhost}-v2`);
  });

  it("names the successor in the status only once the delivered Secret carries it, and starts the grace then", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    await rotationReady();
    store.failure = new BackupError("failed", "the write failed (test)");
    await pass();
    // Accepted by the broker, but the Secret still carries generation 1: so does the status.
    expect(status()).toMatchObject({ passwordGeneration: 1, username: `${vhost}-v1` });
    expect(status()["previousPasswordGeneration"]).toBeUndefined();
    expect(condition("DeliveryReady")?.reason).toBe("BackupNotSynced");
    expect(deliveredUser()).toBe(`${vhost}-v1`);
    clock.advance(600_000);
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(names(userKind)).toContain(`${vhost}-vhost-user-v1`);
    expect(status()).toMatchObject({ passwordGeneration: 1, username: `${vhost}-v1` });
    expect(condition("VhostReady")?.message).toContain(
      `its successor user "${vhost}-v2" is Ready and takes over once the delivered Secret carries it`,
    );
    store.failure = undefined;
    expect(await pass()).toEqual({ requeueAfterMs: 60_000 });
    expect(deliveredUser()).toBe(`${vhost}-v2`);
    expect(status()["previousPasswordDeleteAt"]).toBe(
      new Date(clock.now() + 60_000).toISOString().replace(".000Z", "Z"),
    );
  });

  it("backs off from 10 s up to the transient cap while the broker refuses the successor", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    accept = false;
    await rotationReady();
    const waits: (number | undefined)[] = [];
    for (let i = 0; i < 4; i++) waits.push((await pass()).requeueAfterMs);
    expect(waits).toEqual([10_000, 20_000, 30_000, 30_000]);
    expect(deliveredUser()).toBe(`${vhost}-v1`);
    expect(condition("VhostReady")?.message).toContain("is not switched to yet");
    accept = true;
    expect(await pass()).toEqual({ requeueAfterMs: 60_000 });
    expect(deliveredUser()).toBe(`${vhost}-v2`);
    // A later refusal starts again at 10 s.
    expect(requeues.every((ms) => ms >= 1_000)).toBe(true);
  });

  it("resolves passwordGeneration 0 and an empty deletionPolicy (an older CRD's) to 1 and Retain", async () => {
    world({ passwordGeneration: 0, deletionPolicy: "" });
    await converge();
    expect(status()["passwordGeneration"]).toBe(1);
    const vhost = kube.all(vhostKind)[0]?.["spec"] as { deletionPolicy?: string };
    expect(vhost.deletionPolicy).toBe("retain");
  });

  it("raised passwordGeneration rotates at once", async () => {
    world();
    await converge();
    const raw = order() as KubeObject;
    kube.put(rabbitMQVhostKind, { ...raw, spec: { ...(raw["spec"] as object), passwordGeneration: 3 } });
    await pass();
    topology();
    await pass();
    topology();
    await pass();
    expect(status()["passwordGeneration"]).toBe(3);
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

describe("teardown on the fake port", () => {
  for (const policy of ["Retain", "Delete"] as const) {
    it(`under ${policy} removes the children, the backup and the delivered Secret, then the finalizer`, async () => {
      world({ deletionPolicy: policy });
      await converge();
      expect(store.paths.size).toBe(1);
      await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
      expect(order()?.metadata?.deletionTimestamp).toBeDefined();
      expect(await pass()).toEqual({});
      expect(order()).toBeUndefined();
      expect(store.paths.size).toBe(0);
      expect(kube.all(userKind)).toEqual([]);
      expect(kube.all(permissionKind)).toEqual([]);
      expect(kube.all(vhostKind)).toEqual([]);
      expect(kube.all(secretKind).map((s) => s.metadata?.name)).toEqual(["rabbitmq-default-user"]);
      // The Vhost CR carried the order's policy when it was deleted.
      const vhostWrites = kube
        .writes()
        .filter((c) => c.kind === "Vhost")
        .map((c) => c.op);
      expect(vhostWrites.at(-1)).toBe("delete");
    });
  }

  it("under secret-namespaces without the order's own namespace (a finalizer of an unscoped run), removes everything but the delivered Secret, never asking for a Secret there", async () => {
    world();
    await converge();
    deps = { ...deps, settings: { ...deps.settings, secretNamespaces: [CP_NS] } };
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    const before = kube.calls.length;
    expect(await pass()).toEqual({});
    expect(order()).toBeUndefined();
    expect(store.paths.size).toBe(0);
    expect([...kube.all(userKind), ...kube.all(permissionKind), ...kube.all(vhostKind)]).toEqual([]);
    // The garbage collector takes it with the order, whose owner reference it carries.
    expect(delivered()).toBeDefined();
    const asked = kube.calls.slice(before).filter((c) => c.kind === "Secret");
    expect(asked.filter((c) => c.ref.startsWith(`${TENANT}/`))).toEqual([]);
  });

  it("under secret-namespaces without the ControlPlane's namespace, deletes nothing, keeps the finalizer and reads SecretsOutOfReach", async () => {
    world();
    await converge();
    deps = { ...deps, settings: { ...deps.settings, secretNamespaces: [TENANT] } };
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    const before = kube.calls.length;
    expect(await pass()).toEqual({});
    expect(order()?.metadata?.finalizers).toEqual(["c5c3.io/rabbitmqvhost-teardown"]);
    const ready = condition("Ready");
    expect(ready).toMatchObject({ status: "False", reason: "SecretsOutOfReach" });
    expect(ready?.message).toContain(`namespace "${CP_NS}"`);
    expect(ready?.message).toContain("c5c3.io/rabbitmqvhost-teardown");
    expect(ready?.message).toContain(`c5c3.io/rabbitmqvhost-namespace=${TENANT}`);
    expect(store.paths.size).toBe(1);
    expect(kube.all(userKind)).not.toEqual([]);
    expect(kube.all(vhostKind)).not.toEqual([]);
    const writes = kube.calls.slice(before).filter((c) => c.op !== "get" && c.op !== "list");
    expect(writes.map((c) => `${c.op} ${c.kind}`)).toEqual(["patchStatus RabbitMQVhost"]);
    expect(kube.calls.slice(before).filter((c) => c.kind === "Secret")).toEqual([]);
  });

  it("records its uid on every child, and never adopts the children an earlier order of its name made", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    const uid = order()?.metadata?.uid ?? "";
    for (const kind of [vhostKind, userKind, permissionKind]) {
      for (const child of kube.all(kind)) {
        expect(child.metadata?.annotations?.["c5c3.io/rabbitmqvhost-uid"]).toBe(uid);
      }
    }
    // The order is deleted past its teardown and created again under the same name: a new uid.
    const leftover = { users: names(userKind), permissions: names(permissionKind) };
    const oldPassword = unb64((delivered()?.["data"] as Record<string, string>)["password"]);
    const o = order();
    kube.remove(rabbitMQVhostKind, TENANT, NAME);
    // The garbage collector takes the delivered Secret with the order it names as owner.
    kube.remove(secretKind, TENANT, `${NAME}-credentials`);
    kube.put(rabbitMQVhostKind, {
      ...o,
      metadata: { name: NAME, namespace: TENANT, uid: "the-new-order" },
      status: undefined,
    } as never);
    await pass(); // the finalizer
    const blocked = await pass();
    expect(blocked.error ?? "").toContain("removing children an earlier order of the same name made");
    // The condition names each leftover and the order that made it.
    expect(condition("VhostReady")).toMatchObject({ status: "False", reason: "VhostError" });
    expect(condition("VhostReady")?.message).toContain(
      `User ${CP_NS}/${leftover.users[0]}, made by order uid ${uid}`,
    );
    expect(condition("VhostReady")?.message).toContain(
      `Permission ${CP_NS}/${leftover.permissions[0]}, made by order uid ${uid}`,
    );
    expect(names(userKind)).toEqual([]);
    expect(names(permissionKind)).toEqual([]);
    await converge();
    expect(names(userKind)).toEqual(leftover.users);
    expect(names(permissionKind)).toEqual(leftover.permissions);
    for (const child of [...kube.all(userKind), ...kube.all(permissionKind), ...kube.all(vhostKind)]) {
      expect(child.metadata?.annotations?.["c5c3.io/rabbitmqvhost-uid"]).toBe("the-new-order");
    }
    expect(deliveredUser()).toBe(`${vhost}-v1`);
    // The Vhost CR was taken over, never deleted: under Retain the vhost's data on the broker stays.
    expect(kube.writes().filter((w) => w.kind === "Vhost" && w.op === "delete")).toEqual([]);
    // A fresh password: the earlier order's credentials went with its children.
    expect(unb64((delivered()?.["data"] as Record<string, string>)["password"])).not.toBe(oldPassword);
  });

  it("adopts children that record no uid (made before children recorded it) without a rotation, and stamps them", async () => {
    world();
    await converge();
    const uid = order()?.metadata?.uid ?? "";
    const password = () => unb64((delivered()?.["data"] as Record<string, string>)["password"]);
    const deliveredBefore = password();
    for (const kind of [vhostKind, userKind, permissionKind, secretKind]) {
      for (const child of kube.all(kind)) {
        const { annotations: _, ...metadata } = child.metadata ?? {};
        kube.put(kind, { ...child, metadata: { ...metadata, annotations: { "someone.else/note": "kept" } } });
      }
    }
    const before = { generation: status()["passwordGeneration"], users: names(userKind) };
    await converge();
    expect(status()["passwordGeneration"]).toBe(before.generation);
    expect(names(userKind)).toEqual(before.users);
    expect(password()).toBe(deliveredBefore);
    const children = [vhostKind, userKind, permissionKind, secretKind].flatMap((kind) =>
      kube
        .all(kind)
        .filter((o) => o.metadata?.namespace === CP_NS && o.metadata?.name?.startsWith(`${NAME}-`)),
    );
    expect(children.map((c) => c.kind).sort()).toEqual(["Permission", "Secret", "User", "Vhost"]);
    for (const child of children) {
      expect(child.metadata?.annotations).toMatchObject({
        "c5c3.io/rabbitmqvhost-uid": uid,
        "someone.else/note": "kept",
      });
    }
    // The password Secret kept its password: stamped, never rewritten.
    const secret = children.find((c) => c.kind === "Secret");
    expect(unb64((secret?.["data"] as Record<string, string>)["password"])).toBe(deliveredBefore);
    // Stamped once: the next pass writes nothing.
    const writes = kube.writes().length;
    await pass();
    expect(kube.writes().length).toBe(writes);
  });

  it("never adopts a password Secret an earlier order of its name left behind: deleted, and a fresh one made", async () => {
    world();
    const name = passwordSecretName({ cluster: "", namespace: TENANT, name: NAME }, 1);
    // Restored from an older snapshot: the earlier order's labels, names and recorded uid.
    kube.put(secretKind, {
      metadata: {
        name,
        namespace: CP_NS,
        labels: {
          "c5c3.io/rabbitmqvhost-name": NAME,
          "c5c3.io/rabbitmqvhost-namespace": TENANT,
          "c5c3.io/rabbitmqvhost-cluster": "",
          "rabbitmq.com/topology-operator": "true",
        },
        annotations: { "c5c3.io/rabbitmqvhost-uid": "an-earlier-order" },
      },
      data: { username: b64(`${NAME}-user`), password: b64("the-earlier-orders") },
    });
    await pass(); // the finalizer
    await pass(); // the Vhost CR
    topology();
    const blocked = await pass();
    expect(blocked.error).toContain(`Secret ${CP_NS}/${name}, made by order uid an-earlier-order`);
    expect(condition("VhostReady")?.message).toContain("made by order uid an-earlier-order");
    expect(kube.all(userKind)).toEqual([]);
    await converge();
    const secret = kube.read(secretKind, CP_NS, name);
    expect(secret?.metadata?.annotations?.["c5c3.io/rabbitmqvhost-uid"]).toBe(order()?.metadata?.uid);
    const password = unb64((delivered()?.["data"] as Record<string, string>)["password"]);
    expect(password).not.toBe("the-earlier-orders");
    expect(unb64((secret?.["data"] as Record<string, string>)["password"])).toBe(password);
  });

  it("removes what an order whose finalizer was stripped left behind, after the delay", async () => {
    world();
    await converge();
    deps.orphans = { delayMs: 600_000, sightings: new OrphanSightings() };
    const o = order();
    kube.put(rabbitMQVhostKind, { ...o, metadata: { ...o?.metadata, finalizers: [] } } as never);
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    expect(order()).toBeUndefined();
    // The order may come back (a restore): nothing goes before the delay.
    expect(await pass()).toEqual({ requeueAfterMs: 600_000 });
    expect(kube.all(userKind)).toHaveLength(1);
    clock.advance(599_000);
    expect(await pass()).toEqual({ requeueAfterMs: 1_000 });
    clock.advance(1_000);
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(kube.all(userKind)).toEqual([]);
    expect(kube.all(permissionKind)).toEqual([]);
    expect(kube.all(vhostKind)).toEqual([]);
    expect(store.paths.size).toBe(0);
    // The password Secrets go once no User reads them.
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(kube.all(secretKind).map((s) => s.metadata?.name)).toEqual([
      "rabbitmq-default-user",
      `${NAME}-credentials`,
    ]);
    expect(await pass()).toEqual({});
  });

  it("goes on past a failing step, says which step blocks, and finishes once the fault is gone", async () => {
    world();
    await converge();
    store.failure = new BackupError("unreachable", "OpenBao is unreachable (test)");
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    const blocked = await pass();
    expect(blocked.error).toContain("purging the backup failed");
    // The steps after the purge went ahead.
    expect(kube.all(userKind)).toEqual([]);
    expect(delivered()).toBeUndefined();
    expect(order()?.metadata?.finalizers).toEqual(["c5c3.io/rabbitmqvhost-teardown"]);
    expect(condition("Ready")).toMatchObject({ status: "False", reason: "Deleting" });
    expect(condition("Ready")?.message).toContain("purging the backup failed: OpenBao is unreachable (test)");
    store.failure = undefined;
    expect(await pass()).toEqual({});
    expect(order()).toBeUndefined();
    expect(store.paths.size).toBe(0);
  });

  it("with the ControlPlane gone, releases the finalizer in the pass that issued the deletes, even when the backup cannot be purged", async () => {
    world();
    await converge();
    kube.remove(controlPlaneKind, CP_NS, "cp");
    store.failure = new BackupError("unreachable", "OpenBao is unreachable (test)");
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    expect(await pass()).toEqual({});
    expect(order()).toBeUndefined();
  });

  for (const [what, failing] of [
    ["User", userKind],
    ["Permission", permissionKind],
    ["Vhost", vhostKind],
    ["password Secret", secretKind],
  ] as const) {
    it(`with the ControlPlane gone, keeps the finalizer while a ${what} delete fails, and releases it once the delete goes through`, async () => {
      world();
      await converge();
      kube.remove(controlPlaneKind, CP_NS, "cp");
      const target = kube
        .all(failing)
        .find((o) => o.metadata?.namespace === CP_NS && o.metadata?.name?.startsWith(`${NAME}-`));
      const name = target?.metadata?.name ?? "";
      expect(name).not.toBe("");
      await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
      kube.failNext("delete", failing, apiError(500, "InternalError", "etcd timeout (test)"), { name });
      const blocked = await pass();
      expect(blocked.error).toContain("failed: HTTP 500: etcd timeout (test)");
      expect(order()?.metadata?.finalizers).toEqual(["c5c3.io/rabbitmqvhost-teardown"]);
      expect(condition("Ready")).toMatchObject({ status: "False", reason: "Deleting" });
      expect(condition("Ready")?.message).toMatch(/deleting the .* failed: HTTP 500: etcd timeout \(test\)/);
      expect(kube.read(failing, CP_NS, name)).toBeDefined();
      // The delete goes through on the retry: released in that pass.
      expect(await pass()).toEqual({});
      expect(order()).toBeUndefined();
      expect(kube.read(failing, CP_NS, name)).toBeUndefined();
    });
  }

  it("with the ControlPlane gone, keeps the finalizer while the children cannot be listed", async () => {
    world();
    await converge();
    kube.remove(controlPlaneKind, CP_NS, "cp");
    kube.failNext("list", userKind, apiError(500, "etcd leader changed (test)"));
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    const blocked = await pass();
    expect(blocked.error).toContain("listing the children failed");
    expect(order()?.metadata?.finalizers).toEqual(["c5c3.io/rabbitmqvhost-teardown"]);
    expect(condition("Ready")).toMatchObject({ status: "False", reason: "Deleting" });
    expect(condition("Ready")?.message).toContain(
      "listing the children failed: HTTP 500: etcd leader changed (test)",
    );
    expect(kube.all(userKind)).toHaveLength(1);
    // Listed on the next pass: the deletes go out and the finalizer is released.
    expect(await pass()).toEqual({});
    expect(order()).toBeUndefined();
    expect(kube.all(userKind)).toEqual([]);
  });

  it("a policy changed just before the delete reaches the Vhost CR before it goes", async () => {
    world();
    await converge();
    const raw = order() as KubeObject;
    kube.put(rabbitMQVhostKind, { ...raw, spec: { ...(raw["spec"] as object), deletionPolicy: "Delete" } });
    let policyAtDelete: unknown;
    const vhostName = kube.all(vhostKind)[0]?.metadata?.name ?? "";
    const originalDelete = kube.delete.bind(kube);
    kube.delete = async (kind, ref) => {
      if (kind.kind === "Vhost") {
        policyAtDelete = (kube.read(vhostKind, CP_NS, vhostName)?.["spec"] as { deletionPolicy?: string })
          ?.deletionPolicy;
      }
      return originalDelete(kind, ref);
    };
    // An apply names every field the manager owns: the uid annotation too, or the API server drops it.
    const appliedAnnotations: unknown[] = [];
    const originalApply = kube.apply.bind(kube);
    kube.apply = async (kind, object) => {
      if (kind.kind === "Vhost") appliedAnnotations.push(object.metadata?.annotations);
      return originalApply(kind, object);
    };
    await originalDelete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    await pass();
    expect(policyAtDelete).toBe("delete");
    expect(appliedAnnotations).toEqual([{ "c5c3.io/rabbitmqvhost-uid": raw.metadata?.uid }]);
  });
});
