// Whole passes on the in-memory port and broker where the upstream operator (v1.20.1) behaves
// differently from a naive controller: the generated credentials Secret's label, a broker refusal
// retried with backoff, a deletion that keeps its finalizer while the broker cannot be told, and the
// management path prefix of a RabbitmqCluster.
import { describe, expect, it } from "vitest";
import { queueKind, rabbitmqClusterKind, secretKind, userKind, vhostKind } from "../../src/api/index.ts";
import { TransientError } from "../../src/runtime/base/errors.ts";
import {
  base64,
  namespace,
  newPass,
  putManagedBus,
  readyOf,
  reconcileKind,
  ref,
  settings,
} from "./pass-support.ts";

const label = "rabbitmq.com/topology-operator";

describe("a User's generated credentials Secret", () => {
  it("carries the topology-operator label, so the labelled-Secret watch and cache see it", async () => {
    const { kube, deps } = newPass();
    putManagedBus(kube);
    kube.put(userKind, { metadata: { name: "u", namespace }, spec: { ...ref } });
    await reconcileKind(deps, userKind, "u");
    expect(kube.read(secretKind, namespace, "u-user-credentials")?.metadata?.labels).toEqual({
      [label]: "true",
    });
  });

  it("generated before it was labelled gets the label, with the same credentials", async () => {
    const { kube, deps } = newPass();
    putManagedBus(kube);
    kube.put(userKind, { metadata: { name: "u", namespace }, spec: { ...ref } });
    const data = { username: Buffer.from("old-user").toString("base64"), password: "cGFzcw==" };
    kube.put(secretKind, { metadata: { name: "u-user-credentials", namespace }, data });
    await reconcileKind(deps, userKind, "u");
    const secret = kube.read(secretKind, namespace, "u-user-credentials");
    expect(secret?.metadata?.labels).toEqual({ [label]: "true" });
    expect(secret?.["data"]).toEqual(data);
    expect(kube.read(userKind, namespace, "u")?.["status"]).toMatchObject({ username: "old-user" });
  });
});

describe("a RabbitmqCluster with management.path_prefix", () => {
  it("is reached under the prefix", async () => {
    const { kube, broker, deps } = newPass();
    putManagedBus(kube, { rabbitmq: { additionalConfig: "management.path_prefix = /rabbitmq\n" } });
    kube.put(vhostKind, { metadata: { name: "v", namespace }, spec: { name: "v", ...ref } });
    await reconcileKind(deps, vhostKind, "v");
    expect(broker.has("/api/vhosts/v")).toBe(true);
    expect(new Set(broker.urls)).toEqual(new Set(["http://rmq.app.svc:15672/rabbitmq"]));
  });
});

describe("a broker refusal", () => {
  it("is retried with a doubling backoff, and the resource heals once the broker takes it", async () => {
    const { kube, broker, deps } = newPass();
    putManagedBus(kube);
    kube.put(vhostKind, { metadata: { name: "v", namespace }, spec: { name: "v", ...ref } });
    const pass = () => reconcileKind(deps, vhostKind, "v");
    const vhost = () => kube.read(vhostKind, namespace, "v");
    broker.refuse("/api/vhosts/v", 400, "bad_request: refused for now");

    const waits: (number | undefined)[] = [];
    for (let i = 0; i < 7; i++) {
      const error = await pass().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TransientError);
      waits.push((error as TransientError).retryAfterMs);
    }
    // Doubling from waitingRetryMs, capped at the verification period.
    expect(waits).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
    expect(broker.count("PUT", "/api/vhosts/v")).toBe(7);
    expect(readyOf(vhost())).toMatchObject({
      status: "False",
      reason: "FailedCreateOrUpdate",
      message: expect.stringMatching(/400 bad_request: refused for now/),
    });

    // The broker is fixed: the same object version is declared and Ready; the backoff starts over.
    broker.allow("/api/vhosts/v");
    expect(await pass()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    expect(readyOf(vhost())).toMatchObject({ status: "True" });
    expect(broker.has("/api/vhosts/v")).toBe(true);
    broker.remove("/api/vhosts/v");
    broker.refuse("/api/vhosts/v", 400, "bad_request: again");
    kube.put(vhostKind, { ...vhost(), spec: { name: "v", tags: ["t"], ...ref } });
    await expect(pass()).rejects.toMatchObject({ retryAfterMs: 10_000 });
  });
});

describe("a quorum Queue with deleteIfEmpty and deleteIfUnused, deleted", () => {
  it("keeps its finalizer with a condition while it holds messages or has consumers, then goes", async () => {
    const { kube, broker, deps } = newPass();
    putManagedBus(kube);
    const spec = { name: "q", vhost: "v", type: "quorum", deleteIfEmpty: true, deleteIfUnused: true, ...ref };
    kube.put(queueKind, { metadata: { name: "q", namespace }, spec });
    const pass = () => reconcileKind(deps, queueKind, "q");
    await pass();
    const path = "/api/queues/v/q";
    // What the management API reports about the queue: its statistics.
    const inUse = (messages: number, consumers: number) =>
      broker.store(path, { type: "quorum", messages, consumers });
    await kube.delete(queueKind, { namespace, name: "q" });

    inUse(2, 0);
    await expect(pass()).rejects.toMatchObject({ retryAfterMs: settings.waitingRetryMs });
    expect(readyOf(kube.read(queueKind, namespace, "q"))).toMatchObject({
      status: "False",
      reason: "FailedDelete",
      message: expect.stringMatching(/queue 'q' in vhost 'v' holds 2 messages: deleteIfEmpty keeps it/),
    });
    inUse(0, 1);
    await expect(pass()).rejects.toMatchObject({ retryAfterMs: 2 * settings.waitingRetryMs });
    expect(readyOf(kube.read(queueKind, namespace, "q"))?.["message"]).toMatch(/has 1 consumers/);
    expect(broker.has(path)).toBe(true);

    inUse(0, 0);
    expect(await pass()).toEqual({});
    expect(broker.has(path)).toBe(false);
    expect(kube.read(queueKind, namespace, "q")).toBeUndefined();
  });
});

describe("a deleted User whose broker reference cannot be used", () => {
  const finalizer = "deletion.finalizers.users.rabbitmq.com";

  it("keeps its finalizer while its connection Secret is missing, says what to do, and deletes once it is back", async () => {
    const { kube, broker, deps } = newPass();
    const connection = {
      metadata: { name: "conn", namespace, labels: { [label]: "true" } },
      data: { uri: base64("http://broker:15672"), username: base64("admin"), password: base64("pw") },
    };
    kube.put(secretKind, connection);
    const spec = { rabbitmqClusterReference: { connectionSecret: { name: "conn" } } };
    kube.put(userKind, { metadata: { name: "u", namespace }, spec });
    await reconcileKind(deps, userKind, "u");
    const username = (kube.read(userKind, namespace, "u")?.["status"] as { username: string }).username;
    expect(broker.has(`/api/users/${username}`)).toBe(true);

    kube.remove(secretKind, namespace, "conn");
    await kube.delete(userKind, { namespace, name: "u" });
    expect(await reconcileKind(deps, userKind, "u")).toEqual({ requeueAfterMs: settings.waitingRetryMs });
    const held = kube.read(userKind, namespace, "u");
    expect(held?.metadata?.finalizers).toEqual([finalizer]);
    expect(readyOf(held)).toMatchObject({
      status: "False",
      reason: "FailedDelete",
      message: `connection Secret ${namespace}/conn not found: the User is deleted on the broker once that is resolved; to leave it on the broker instead, remove the finalizer ${finalizer}`,
    });
    expect(broker.has(`/api/users/${username}`)).toBe(true);

    kube.put(secretKind, connection);
    expect(await reconcileKind(deps, userKind, "u")).toEqual({});
    expect(broker.has(`/api/users/${username}`)).toBe(false);
    expect(kube.read(userKind, namespace, "u")).toBeUndefined();
  });

  it("keeps its finalizer while its RabbitmqCluster in another namespace withholds consent", async () => {
    const { kube, broker, deps } = newPass();
    putManagedBus(kube);
    const cluster = kube.read(rabbitmqClusterKind, namespace, "rmq") ?? {};
    const consent = (annotations: Record<string, string>) =>
      kube.put(rabbitmqClusterKind, { ...cluster, metadata: { ...cluster.metadata, annotations } });
    consent({ "rabbitmq.com/topology-allowed-namespaces": "tenant" });
    const spec = { rabbitmqClusterReference: { name: "rmq", namespace } };
    kube.put(userKind, { metadata: { name: "u", namespace: "tenant" }, spec });
    const pass = () => reconcileKind(deps, userKind, "u", "tenant");
    await pass();
    const username = (kube.read(userKind, "tenant", "u")?.["status"] as { username: string }).username;
    expect(broker.has(`/api/users/${username}`)).toBe(true);

    consent({});
    await kube.delete(userKind, { namespace: "tenant", name: "u" });
    expect(await pass()).toEqual({ requeueAfterMs: settings.waitingRetryMs });
    const held = kube.read(userKind, "tenant", "u");
    expect(held?.metadata?.finalizers).toEqual([finalizer]);
    expect(readyOf(held)?.["message"]).toMatch(
      /does not allow topology resources from namespace tenant .*: the User is deleted on the broker once that is resolved; to leave it on the broker instead, remove the finalizer/,
    );
    expect(broker.has(`/api/users/${username}`)).toBe(true);

    consent({ "rabbitmq.com/topology-allowed-namespaces": "*" });
    expect(await pass()).toEqual({});
    expect(broker.has(`/api/users/${username}`)).toBe(false);
  });
});

describe("a deleted Queue whose connection Secret lacks the label", () => {
  const connection = (labels: Record<string, string>) => ({
    metadata: { name: "conn", namespace, labels },
    data: { uri: base64("http://broker:15672"), username: base64("admin"), password: base64("pw") },
  });
  const spec = {
    name: "q",
    vhost: "v",
    durable: true,
    rabbitmqClusterReference: { connectionSecret: { name: "conn" } },
  };

  it("goes without a broker request when it was never declared, and a queue of its name stays", async () => {
    const { kube, broker, deps } = newPass();
    broker.store("/api/queues/v/q", { name: "q", vhost: "v", durable: true });
    kube.put(secretKind, connection({}));
    kube.put(queueKind, { metadata: { name: "q", namespace }, spec });
    await expect(reconcileKind(deps, queueKind, "q")).rejects.toThrow(/must carry the label/);

    await kube.delete(queueKind, { namespace, name: "q" });
    expect(await reconcileKind(deps, queueKind, "q")).toEqual({});
    expect(kube.read(queueKind, namespace, "q")).toBeUndefined();
    expect(broker.requests).toEqual([]);
    expect(broker.has("/api/queues/v/q")).toBe(true);
  });

  it("is deleted on the broker through the Secret when it was declared before the label went", async () => {
    const { kube, broker, deps } = newPass();
    kube.put(secretKind, connection({ [label]: "true" }));
    kube.put(queueKind, { metadata: { name: "q", namespace }, spec });
    await reconcileKind(deps, queueKind, "q");
    expect(broker.has("/api/queues/v/q")).toBe(true);

    kube.put(secretKind, connection({}));
    await expect(reconcileKind(deps, queueKind, "q")).rejects.toThrow(/must carry the label/);
    await kube.delete(queueKind, { namespace, name: "q" });
    expect(await reconcileKind(deps, queueKind, "q")).toEqual({});
    expect(kube.read(queueKind, namespace, "q")).toBeUndefined();
    expect(broker.has("/api/queues/v/q")).toBe(false);
  });
});
