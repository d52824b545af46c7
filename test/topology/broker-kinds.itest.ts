// Vhost, Permission, Queue, Exchange, Binding and Policy declared, read back, changed and deleted on
// the local RabbitMQ. Each test works in its own vhost and removes it.
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ManagementApiError,
  apiPath,
  declareBinding,
  declareExchange,
  declarePermission,
  declarePolicy,
  declareQueue,
  declareUser,
  declareVhost,
  deleteBinding,
  deleteExchange,
  deletePermission,
  deletePolicy,
  deleteQueue,
  deleteUser,
  deleteVhost,
  isInequivalentRedeclare,
  readBackBinding,
  readBackExchange,
  readBackPermission,
  readBackPolicy,
  readBackQueue,
  readBackVhost,
  type BindingSpec,
  type VhostSpec,
} from "../../src/topology/broker/index.ts";
import { admin, clients, unique } from "./broker-support.ts";

const cleanups: (() => Promise<unknown>)[] = [];

async function freshVhost(): Promise<string> {
  const name = unique("kinds");
  await declareVhost(admin, { name });
  cleanups.push(() => deleteVhost(admin, name));
  return name;
}

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => clients.close());

const anything = z.unknown();
const raw = (path: string) => admin.get(path, anything) as Promise<Record<string, unknown>>;

async function refusal(promise: Promise<unknown>): Promise<ManagementApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ManagementApiError);
  return err as ManagementApiError;
}

describe("vhost", () => {
  it("is declared with its settings and limits, read back, changed and deleted", async () => {
    const name = unique("vhost");
    cleanups.push(() => deleteVhost(admin, name));
    const spec: VhostSpec = {
      name,
      description: "orders",
      tags: ["a", "b"],
      defaultQueueType: "quorum",
      tracing: true,
      limits: { connections: 10, queues: 5 },
    };
    expect(await readBackVhost(admin, spec)).toEqual({ exists: false, matches: false, differences: [] });
    await declareVhost(admin, spec);
    expect(await readBackVhost(admin, spec)).toEqual({ exists: true, matches: true, differences: [] });
    expect(await raw(apiPath("vhosts", name))).toMatchObject({
      description: "orders",
      tags: ["a", "b"],
      default_queue_type: "quorum",
      tracing: true,
    });
    expect(await admin.get(apiPath("vhost-limits", name), anything)).toEqual([
      { vhost: name, value: { "max-connections": 10, "max-queues": 5 } },
    ]);

    const changed: VhostSpec = { ...spec, tags: ["c"], tracing: false, limits: { connections: 20 } };
    expect((await readBackVhost(admin, changed)).differences).toEqual([
      "tags",
      "tracing",
      "limits.max-connections",
      "limits.max-queues",
    ]);
    await declareVhost(admin, changed);
    expect(await readBackVhost(admin, changed)).toMatchObject({ matches: true });
    expect(await admin.get(apiPath("vhost-limits", name), anything)).toEqual([
      { vhost: name, value: { "max-connections": 20 } },
    ]);
    await declareVhost(admin, { ...changed, limits: undefined });
    expect(await admin.get(apiPath("vhost-limits", name), anything)).toEqual([]);

    expect(await deleteVhost(admin, name)).toBe("deleted");
    expect(await readBackVhost(admin, changed)).toMatchObject({ exists: false });
    expect(await deleteVhost(admin, name)).toBe("absent");
  });

  it("keeps a name with reserved characters intact", async () => {
    const name = `${unique("odd")}/a+b%c #?`;
    cleanups.push(() => deleteVhost(admin, name));
    await declareVhost(admin, { name, tags: ["x"] });
    expect(await raw(apiPath("vhosts", name))).toMatchObject({ name });
    expect(await readBackVhost(admin, { name, tags: ["x"] })).toMatchObject({ matches: true });
    expect(await deleteVhost(admin, name)).toBe("deleted");
  });
});

describe("permission", () => {
  it("is declared, read back, changed and deleted", async () => {
    const vhost = await freshVhost();
    const user = unique("perm-user");
    await declareUser(admin, { username: user, credentials: { password: "p" } });
    cleanups.push(() => deleteUser(admin, user));
    const spec = { user, vhost, permissions: { configure: "^app\\.", write: ".*", read: ".*" } };
    await declarePermission(admin, spec);
    expect(await readBackPermission(admin, spec)).toMatchObject({ exists: true, matches: true });
    const changed = { ...spec, permissions: { read: ".*" } };
    expect((await readBackPermission(admin, changed)).differences).toEqual(["configure", "write"]);
    await declarePermission(admin, changed);
    expect(await raw(apiPath("permissions", vhost, user))).toMatchObject({
      configure: "",
      write: "",
      read: ".*",
    });
    expect(await deletePermission(admin, spec)).toBe("deleted");
    expect(await readBackPermission(admin, spec)).toMatchObject({ exists: false });
    expect(await deletePermission(admin, spec)).toBe("absent");
  });
});

describe("queue", () => {
  it("sends the type in both places and reads back", async () => {
    const vhost = await freshVhost();
    const spec = { name: "orders", vhost, type: "quorum", durable: true, arguments: { "x-max-length": 100 } };
    await declareQueue(admin, spec);
    expect(await raw(apiPath("queues", vhost, "orders"))).toMatchObject({
      type: "quorum",
      durable: true,
      auto_delete: false,
      arguments: { "x-queue-type": "quorum", "x-max-length": 100 },
    });
    expect(await readBackQueue(admin, spec)).toEqual({ exists: true, matches: true, differences: [] });
    await declareQueue(admin, spec); // an equal redeclaration is accepted
  });

  it("classifies a refused redeclaration and keeps the broker's message", async () => {
    const vhost = await freshVhost();
    const spec = { name: "qc", vhost, type: "classic", durable: true };
    await declareQueue(admin, spec);
    const changed = { ...spec, durable: false };
    expect((await readBackQueue(admin, changed)).differences).toEqual(["durable"]);
    const err = await refusal(declareQueue(admin, changed));
    expect(isInequivalentRedeclare(err)).toBe(true);
    expect(err.status).toBeGreaterThanOrEqual(400);
    expect(err.status).toBeLessThan(500);
    expect(err.reason).toMatch(/inequivalent arg 'durable' for queue 'qc'/);
    const retyped = await refusal(declareQueue(admin, { ...spec, type: "quorum" }));
    expect(isInequivalentRedeclare(retyped)).toBe(true);
  });

  it("is deleted only if empty when asked, and a missing queue is done", async () => {
    const vhost = await freshVhost();
    const spec = { name: "work", vhost, type: "classic", deleteIfEmpty: true };
    await declareQueue(admin, spec);
    await admin.post(apiPath("exchanges", vhost, "amq.default", "publish"), {
      properties: {},
      routing_key: "work",
      payload: "m",
      payload_encoding: "string",
    });
    const refused = await refusal(deleteQueue(admin, spec));
    expect(isInequivalentRedeclare(refused)).toBe(false);
    expect(await readBackQueue(admin, spec)).toMatchObject({ exists: true });
    expect(await deleteQueue(admin, { ...spec, deleteIfEmpty: false })).toBe("deleted");
    expect(await readBackQueue(admin, spec)).toMatchObject({ exists: false });
    expect(await deleteQueue(admin, spec)).toBe("absent");
  });
});

describe("exchange", () => {
  it("is declared, read back, refused a change of type, and deleted", async () => {
    const vhost = await freshVhost();
    const spec = {
      name: "events",
      vhost,
      type: "topic",
      durable: true,
      arguments: { "alternate-exchange": "ae" },
    };
    await declareExchange(admin, spec);
    expect(await raw(apiPath("exchanges", vhost, "events"))).toMatchObject({
      type: "topic",
      durable: true,
      auto_delete: false,
      arguments: { "alternate-exchange": "ae" },
    });
    expect(await readBackExchange(admin, spec)).toMatchObject({ matches: true });
    const changed = { ...spec, type: "fanout" };
    expect((await readBackExchange(admin, changed)).differences).toEqual(["type"]);
    expect(isInequivalentRedeclare(await refusal(declareExchange(admin, changed)))).toBe(true);
    // upstream's defaults: direct, not durable
    await declareExchange(admin, { name: "plain", vhost });
    expect(await raw(apiPath("exchanges", vhost, "plain"))).toMatchObject({ type: "direct", durable: false });
    expect(await deleteExchange(admin, spec)).toBe("deleted");
    expect(await readBackExchange(admin, spec)).toMatchObject({ exists: false });
    expect(await deleteExchange(admin, spec)).toBe("absent");
  });
});

describe("binding", () => {
  it("is declared idempotently and deleted by its properties_key", async () => {
    const vhost = await freshVhost();
    await declareExchange(admin, { name: "src", vhost, type: "topic" });
    await declareQueue(admin, { name: "dst", vhost, type: "classic" });
    const spec: BindingSpec = {
      vhost,
      source: "src",
      destination: "dst",
      destinationType: "queue",
      routingKey: "a+b%c",
      arguments: { tier: "gold" },
    };
    const sibling: BindingSpec = { ...spec, arguments: { tier: "silver" } };
    await declareBinding(admin, spec);
    await declareBinding(admin, spec);
    await declareBinding(admin, sibling);
    const listed = () =>
      admin.get(apiPath("bindings", vhost, "e", "src", "q", "dst"), z.array(z.looseObject({})));
    expect(await listed()).toHaveLength(2);
    expect(await readBackBinding(admin, spec)).toMatchObject({ exists: true, matches: true });

    expect(await deleteBinding(admin, spec)).toBe("deleted");
    expect(await readBackBinding(admin, spec)).toMatchObject({ exists: false });
    expect(await readBackBinding(admin, sibling)).toMatchObject({ exists: true });
    expect(await listed()).toEqual([
      expect.objectContaining({ routing_key: "a+b%c", arguments: { tier: "silver" } }),
    ]);
    expect(await deleteBinding(admin, spec)).toBe("absent");
  });

  it("binds an exchange to an exchange, and a binding whose ends are gone is done", async () => {
    const vhost = await freshVhost();
    await declareExchange(admin, { name: "from", vhost, type: "fanout" });
    await declareExchange(admin, { name: "to", vhost, type: "fanout" });
    const spec: BindingSpec = { vhost, source: "from", destination: "to", destinationType: "exchange" };
    await declareBinding(admin, spec);
    expect(await readBackBinding(admin, spec)).toMatchObject({ matches: true });
    await deleteExchange(admin, { name: "to", vhost });
    expect(await deleteBinding(admin, spec)).toBe("absent");
  });
});

describe("policy", () => {
  it("is declared, read back, changed and deleted", async () => {
    const vhost = await freshVhost();
    const spec = {
      name: "limits",
      vhost,
      pattern: "^orders\\.",
      applyTo: "queues",
      priority: 2,
      definition: { "max-length": 10 },
    };
    await declarePolicy(admin, spec);
    expect(await raw(apiPath("policies", vhost, "limits"))).toMatchObject({
      pattern: "^orders\\.",
      "apply-to": "queues",
      priority: 2,
      definition: { "max-length": 10 },
    });
    expect(await readBackPolicy(admin, spec)).toMatchObject({ matches: true });
    const changed = { ...spec, applyTo: undefined, priority: undefined, definition: { "max-length": 20 } };
    expect((await readBackPolicy(admin, changed)).differences).toEqual(["applyTo", "priority", "definition"]);
    await declarePolicy(admin, changed);
    expect(await raw(apiPath("policies", vhost, "limits"))).toMatchObject({ "apply-to": "all", priority: 0 });
    expect(await readBackPolicy(admin, changed)).toMatchObject({ matches: true });
    expect(await deletePolicy(admin, spec)).toBe("deleted");
    expect(await readBackPolicy(admin, spec)).toMatchObject({ exists: false });
    expect(await deletePolicy(admin, spec)).toBe("absent");
  });
});

describe("deleting what is not there", () => {
  it("is done for every kind, even in a missing vhost", async () => {
    const vhost = unique("gone");
    const binding: BindingSpec = { vhost, source: "s", destination: "d", destinationType: "queue" };
    expect(await deleteVhost(admin, vhost)).toBe("absent");
    expect(await deleteUser(admin, unique("gone-user"))).toBe("absent");
    expect(await deletePermission(admin, { vhost, user: "nobody" })).toBe("absent");
    expect(await deleteQueue(admin, { vhost, name: "q", deleteIfEmpty: true, deleteIfUnused: true })).toBe(
      "absent",
    );
    expect(await deleteExchange(admin, { vhost, name: "x" })).toBe("absent");
    expect(await deleteBinding(admin, binding)).toBe("absent");
    expect(await deletePolicy(admin, { vhost, name: "p" })).toBe("absent");
  });
});
