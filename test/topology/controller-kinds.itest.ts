// The topology controller's reconcile functions against the local kube-apiserver and RabbitMQ:
// each kind created, updated where its CRD allows, and deleted, status as upstream writes it, drift
// repaired on the next verification, and a refused redeclaration reported with the broker's message.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  bindingKind,
  exchangeKind,
  policyKind,
  queueKind,
  topologyKinds,
  vhostKind,
} from "../../src/api/index.ts";
import { apiPath, deleteVhost } from "../../src/topology/broker/index.ts";
import { topologyKind } from "../../src/topology/index.ts";
import { reconcileExternal } from "../../src/external/index.ts";
import {
  admin,
  condition,
  createResource,
  deleteResource,
  getResource,
  makeDeps,
  patchSpec,
  rabbitmqctl,
  refusal,
  setUpNamespace,
  settle,
  tearDownNamespace,
  unique,
  type Reconcile,
} from "./controller-harness.ts";

const ref = { rabbitmqClusterReference: { name: "rabbitmq" } };
const vhostAnswer = z.looseObject({ name: z.string(), tags: z.array(z.string()), tracing: z.boolean() });
const limitsAnswer = z.array(z.looseObject({ value: z.record(z.string(), z.number()) }));
const queueAnswer = z.looseObject({
  durable: z.boolean(),
  type: z.string(),
  arguments: z.record(z.string(), z.unknown()),
});
const exchangeAnswer = z.looseObject({ type: z.string(), durable: z.boolean() });
const policyAnswer = z.looseObject({ pattern: z.string(), definition: z.record(z.string(), z.unknown()) });
const bindingsAnswer = z.array(z.looseObject({ routing_key: z.string() }));

let namespace = "";
const deps = makeDeps();
const brokerVhosts: string[] = [];

beforeAll(async () => {
  namespace = await setUpNamespace("topo-kinds");
});
afterAll(async () => {
  await tearDownNamespace(namespace, topologyKinds);
  for (const vhost of brokerVhosts) await deleteVhost(admin, vhost).catch(() => undefined);
});

/** A vhost on the broker for queue, exchange, binding and policy tests, removed afterwards. */
async function brokerVhost(): Promise<string> {
  const vhost = unique("kinds");
  brokerVhosts.push(vhost);
  await createResource(vhostKind, namespace, vhost, { name: vhost, ...ref });
  expect((await settle(topologyKind.vhost, deps, namespace, vhost)).terminal).toBeUndefined();
  return vhost;
}

async function expectReady(kind: typeof vhostKind, name: string, generation: number) {
  const resource = await getResource(kind, namespace, name);
  expect(condition(resource, "Ready")).toMatchObject({ status: "True", reason: "SuccessfulCreateOrUpdate" });
  expect(condition(resource, "Ready")?.message).toBeUndefined();
  expect(resource?.status?.observedGeneration).toBe(generation);
  expect(resource?.metadata.finalizers).toContain(`deletion.finalizers.${kind.plural}.rabbitmq.com`);
  return resource;
}

/** Waits until the broker's statistics of a queue (a few seconds late) report a message count that `ok` takes. */
async function queueStats(vhost: string, queue: string, ok: (messages: number) => boolean): Promise<void> {
  const stats = z.looseObject({ messages: z.number().optional() });
  const deadline = Date.now() + 15_000;
  while (!ok((await admin.get(apiPath("queues", vhost, queue), stats)).messages ?? 0)) {
    if (Date.now() > deadline) throw new Error(`the statistics of queue ${queue} did not arrive`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * A queue's arguments without `x-queue-type`: RabbitMQ 4.x adds the type it chose to the arguments
 * of a queue declared without one (`"x-queue-type": "classic"`), 3.10 leaves them as declared.
 */
function untyped(args: Record<string, unknown>): Record<string, unknown> {
  const { ["x-queue-type"]: _type, ...rest } = args;
  return rest;
}

/** Deletes the resource and reconciles until it is gone from the API. */
async function deleteAndSettle(kind: typeof vhostKind, reconcile: Reconcile, name: string) {
  await deleteResource(kind, namespace, name);
  expect(await settle(reconcile, deps, namespace, name)).toEqual({ outcome: {} });
  expect(await getResource(kind, namespace, name)).toBeUndefined();
}

describe("Vhost", () => {
  it("is created, updated without a status write when nothing changed, and deleted", async () => {
    const name = unique("vhost");
    brokerVhosts.push(name);
    await createResource(vhostKind, namespace, name, { name, tags: ["a"], limits: { queues: 5 }, ...ref });
    await settle(topologyKind.vhost, deps, namespace, name);
    const first = await expectReady(vhostKind, name, 1);
    expect(await admin.get(apiPath("vhosts", name), vhostAnswer)).toMatchObject({
      tags: ["a"],
      tracing: false,
    });
    expect((await admin.get(apiPath("vhost-limits", name), limitsAnswer))[0]?.value).toEqual({
      "max-queues": 5,
    });

    // Nothing changed: no write at all, so the resourceVersion stays.
    await settle(topologyKind.vhost, deps, namespace, name);
    expect((await getResource(vhostKind, namespace, name))?.metadata.resourceVersion).toBe(
      first?.metadata.resourceVersion,
    );

    await patchSpec(vhostKind, namespace, name, { tags: ["a", "b"], tracing: true });
    await settle(topologyKind.vhost, deps, namespace, name);
    const second = await expectReady(vhostKind, name, 2);
    // Ready stayed True: its transition time is kept.
    expect(condition(second, "Ready")?.lastTransitionTime).toBe(
      condition(first, "Ready")?.lastTransitionTime,
    );
    const updated = await admin.get(apiPath("vhosts", name), vhostAnswer);
    expect([...updated.tags].sort()).toEqual(["a", "b"]);
    expect(updated.tracing).toBe(true);

    await deleteAndSettle(vhostKind, topologyKind.vhost, name);
    expect(await admin.find(apiPath("vhosts", name), vhostAnswer)).toBeUndefined();
  });

  it("with deletionPolicy retain is left on the broker", async () => {
    const name = unique("vhost-retain");
    brokerVhosts.push(name);
    await createResource(vhostKind, namespace, name, { name, deletionPolicy: "retain", ...ref });
    await settle(topologyKind.vhost, deps, namespace, name);
    await expectReady(vhostKind, name, 1);
    await deleteAndSettle(vhostKind, topologyKind.vhost, name);
    expect(await admin.find(apiPath("vhosts", name), vhostAnswer)).toMatchObject({ name });
  });

  it("deleted with rabbitmqctl comes back on the next verification pass", async () => {
    const name = unique("vhost-drift");
    brokerVhosts.push(name);
    await createResource(vhostKind, namespace, name, { name, ...ref });
    await settle(topologyKind.vhost, deps, namespace, name);
    await rabbitmqctl("delete_vhost", name);
    expect(await admin.find(apiPath("vhosts", name), vhostAnswer)).toBeUndefined();
    // Still within the verification period: the memo is trusted and the broker is not asked.
    const early = await reconcileExternal(topologyKind.vhost, deps, namespace, name);
    expect(early.requeueAfterMs).toBeLessThan(deps.settings.verificationPeriodMs);
    expect(await admin.find(apiPath("vhosts", name), vhostAnswer)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, early.requeueAfterMs));
    await reconcileExternal(topologyKind.vhost, deps, namespace, name);
    expect(await admin.find(apiPath("vhosts", name), vhostAnswer)).toMatchObject({ name });
  });
});

describe("Queue", () => {
  it("is declared with its type in both places, and as a quorum queue with deleteIfEmpty is kept while it holds a message, then deleted", async () => {
    const vhost = await brokerVhost();
    const name = unique("queue");
    await createResource(queueKind, namespace, name, {
      name: "q1",
      vhost,
      type: "quorum",
      arguments: { "x-max-length": 10 },
      ...ref,
    });
    await settle(topologyKind.queue, deps, namespace, name);
    await expectReady(queueKind, name, 1);
    const queue = await admin.get(apiPath("queues", vhost, "q1"), queueAnswer);
    expect(queue).toMatchObject({ type: "quorum", durable: true });
    expect(queue.arguments).toEqual({ "x-max-length": 10, "x-queue-type": "quorum" });

    // RabbitMQ refuses if-empty and if-unused on a quorum queue: the counts are checked instead.
    await patchSpec(queueKind, namespace, name, { deleteIfEmpty: true, deleteIfUnused: true });
    await settle(topologyKind.queue, deps, namespace, name);
    await expectReady(queueKind, name, 2);
    await admin.post(apiPath("exchanges", vhost, "amq.default", "publish"), {
      properties: {},
      routing_key: "q1",
      payload: "m",
      payload_encoding: "string",
    });
    await queueStats(vhost, "q1", (messages) => messages === 1);
    await deleteResource(queueKind, namespace, name);
    const kept = await refusal(topologyKind.queue, deps, namespace, name);
    expect(kept.message).toMatch(/queue 'q1' in vhost '.*' holds 1 messages: deleteIfEmpty keeps it/);
    const held = await getResource(queueKind, namespace, name);
    expect(held?.metadata.finalizers).toContain("deletion.finalizers.queues.rabbitmq.com");
    expect(condition(held, "Ready")).toMatchObject({ status: "False", reason: "FailedDelete" });
    expect(condition(held, "Ready")?.message).toMatch(/holds 1 messages/);
    expect(await admin.find(apiPath("queues", vhost, "q1"), queueAnswer)).toBeDefined();

    // Only deleteIfUnused left, and no consumer: deleted on the broker without the flag (which the
    // broker would refuse), and the finalizer goes.
    await patchSpec(queueKind, namespace, name, { deleteIfEmpty: false });
    expect(await settle(topologyKind.queue, deps, namespace, name)).toEqual({ outcome: {} });
    expect(await getResource(queueKind, namespace, name)).toBeUndefined();
    expect(await admin.find(apiPath("queues", vhost, "q1"), queueAnswer)).toBeUndefined();
  });

  it("already on the broker with other arguments reads the broker's refusal, retries it, and heals once it is gone", async () => {
    // Arguments are immutable in the CRD; a queue someone else declared is where they can still differ.
    const vhost = await brokerVhost();
    await admin.put(apiPath("queues", vhost, "q3"), { durable: true, arguments: { "x-max-length": 20 } });
    const name = unique("queue-taken");
    await createResource(queueKind, namespace, name, {
      name: "q3",
      vhost,
      arguments: { "x-max-length": 10 },
      ...ref,
    });
    // Retried with a backoff, never terminal: the same object version must heal once the broker lets it.
    const first = await refusal(topologyKind.queue, deps, namespace, name);
    expect(first.message).toMatch(/inequivalent arg 'x-max-length'/);
    expect(first.retryAfterMs).toBe(deps.settings.waitingRetryMs);
    const second = await refusal(topologyKind.queue, deps, namespace, name);
    expect(second.retryAfterMs).toBe(2 * deps.settings.waitingRetryMs);
    const refused = await getResource(queueKind, namespace, name);
    expect(condition(refused, "Ready")).toMatchObject({ status: "False", reason: "FailedCreateOrUpdate" });
    expect(condition(refused, "Ready")?.message).toMatch(/inequivalent arg 'x-max-length' for queue 'q3'/);
    expect(refused?.status?.observedGeneration).toBeUndefined();
    expect(untyped((await admin.get(apiPath("queues", vhost, "q3"), queueAnswer)).arguments)).toEqual({
      "x-max-length": 20,
    });

    // The conflicting queue goes: the next retry declares the resource's own, with no change to it.
    await admin.delete(apiPath("queues", vhost, "q3"));
    expect((await settle(topologyKind.queue, deps, namespace, name)).terminal).toBeUndefined();
    await expectReady(queueKind, name, 1);
    expect(untyped((await admin.get(apiPath("queues", vhost, "q3"), queueAnswer)).arguments)).toEqual({
      "x-max-length": 10,
    });
  });

  it("with deletionPolicy retain stays, and recreated with another durability is refused", async () => {
    const vhost = await brokerVhost();
    const name = unique("queue-retain");
    const spec = { name: "q2", vhost, type: "classic", deletionPolicy: "retain", ...ref };
    await createResource(queueKind, namespace, name, { ...spec, durable: true });
    await settle(topologyKind.queue, deps, namespace, name);
    await expectReady(queueKind, name, 1);
    await deleteAndSettle(queueKind, topologyKind.queue, name);
    expect(await admin.find(apiPath("queues", vhost, "q2"), queueAnswer)).toMatchObject({ durable: true });

    await createResource(queueKind, namespace, name, { ...spec, durable: false });
    expect((await refusal(topologyKind.queue, deps, namespace, name)).message).toMatch(/inequivalent arg/);
    expect(condition(await getResource(queueKind, namespace, name), "Ready")).toMatchObject({
      status: "False",
      message: expect.stringMatching(/inequivalent arg 'durable' for queue 'q2'/),
    });
  });
});

describe("Exchange, Binding and Policy", () => {
  it("are declared, a binding is deleted by its properties key, and an exchange argument change is refused", async () => {
    const vhost = await brokerVhost();
    const exchange = unique("exchange");
    const queue = unique("queue");
    const binding = unique("binding");
    await createResource(exchangeKind, namespace, exchange, {
      name: "x1",
      vhost,
      type: "topic",
      durable: true,
      ...ref,
    });
    await createResource(queueKind, namespace, queue, { name: "q3", vhost, ...ref });
    await createResource(bindingKind, namespace, binding, {
      vhost,
      source: "x1",
      destination: "q3",
      destinationType: "queue",
      routingKey: "a+b%c",
      ...ref,
    });
    // The binding first: its ends' objects have not been reconciled, so it waits for them, with no
    // broker request and no status.
    expect(
      (await reconcileExternal(topologyKind.binding, deps, namespace, binding)).requeueAfterMs,
    ).toBeGreaterThan(0);
    expect((await getResource(bindingKind, namespace, binding))?.status).toBeUndefined();
    const declared = await admin.find(apiPath("bindings", vhost, "e", "x1", "q", "q3"), bindingsAnswer);
    expect(declared ?? []).toEqual([]);
    // A binding whose end no object here declares is refused by the broker until it exists (a 404).
    const stray = unique("binding");
    await createResource(bindingKind, namespace, stray, {
      vhost,
      source: "amq.direct",
      destination: "no-such-queue",
      destinationType: "queue",
      ...ref,
    });
    await expect(reconcileExternal(topologyKind.binding, deps, namespace, stray)).rejects.toThrow(/404/);
    await deleteAndSettle(bindingKind, topologyKind.binding, stray);
    await settle(topologyKind.exchange, deps, namespace, exchange);
    await settle(topologyKind.queue, deps, namespace, queue);
    await settle(topologyKind.binding, deps, namespace, binding);
    await expectReady(exchangeKind, exchange, 1);
    await expectReady(bindingKind, binding, 1);
    expect(await admin.get(apiPath("exchanges", vhost, "x1"), exchangeAnswer)).toMatchObject({
      type: "topic",
      durable: true,
    });
    const listed = () => admin.get(apiPath("bindings", vhost, "e", "x1", "q", "q3"), bindingsAnswer);
    expect((await listed()).map((b) => b.routing_key)).toEqual(["a+b%c"]);

    await deleteAndSettle(bindingKind, topologyKind.binding, binding);
    expect(await listed()).toEqual([]);

    // Exchange arguments may change in the CRD; the broker refuses the redeclaration.
    await patchSpec(exchangeKind, namespace, exchange, { arguments: { "alternate-exchange": "ae" } });
    const refused = await refusal(topologyKind.exchange, deps, namespace, exchange);
    expect(refused.message).toMatch(/inequivalent arg 'alternate-exchange'/);
    expect(condition(await getResource(exchangeKind, namespace, exchange), "Ready")?.message).toMatch(
      /inequivalent arg 'alternate-exchange' for exchange 'x1'/,
    );
    await deleteAndSettle(exchangeKind, topologyKind.exchange, exchange);
    expect(await admin.find(apiPath("exchanges", vhost, "x1"), exchangeAnswer)).toBeUndefined();
  });

  it("a policy is created, updated and deleted", async () => {
    const vhost = await brokerVhost();
    const name = unique("policy");
    await createResource(policyKind, namespace, name, {
      name: "ttl",
      vhost,
      pattern: "^q",
      definition: { "message-ttl": 70000 },
      ...ref,
    });
    await settle(topologyKind.policy, deps, namespace, name);
    await expectReady(policyKind, name, 1);
    expect(await admin.get(apiPath("policies", vhost, "ttl"), policyAnswer)).toMatchObject({
      pattern: "^q",
      definition: { "message-ttl": 70000 },
    });
    await patchSpec(policyKind, namespace, name, { pattern: "^r", definition: { "message-ttl": 1000 } });
    await settle(topologyKind.policy, deps, namespace, name);
    await expectReady(policyKind, name, 2);
    expect(await admin.get(apiPath("policies", vhost, "ttl"), policyAnswer)).toMatchObject({
      pattern: "^r",
      definition: { "message-ttl": 1000 },
    });
    await deleteAndSettle(policyKind, topologyKind.policy, name);
    expect(await admin.find(apiPath("policies", vhost, "ttl"), policyAnswer)).toBeUndefined();
  });
});
