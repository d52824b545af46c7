// OpenStack's messaging library consumes what the operator delivers, through the operator process
// (`node src/main.ts`, the built-in topology controller), on the 3.10 broker and on the 4.3 one: a
// ControlPlane's managed bus is that broker, an order becomes Ready, and a service on oslo.messaging
// (e2e/support/oslo/messaging.py: an RPC server, an RPC client, a notifier and a notification listener)
// works through the delivered `transport_url`, read by oslo.config from OS_DEFAULT__TRANSPORT_URL as
// docs/tenants.md tells a service to. Then a raised passwordGeneration: the service still running with the
// old URL keeps making RPC calls through the grace period, one started with the new URL works (and both
// reach each other's servers: one vhost), and once the old service is gone and the old user swept, a
// fresh connection with the old URL is refused by the broker's authentication (ACCESS_REFUSED), not by
// anything else. No password or transport URL reaches the operator's logs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userName } from "../src/orders/rabbitmq/naming.ts";
import { eventually } from "../harness/world/kube.ts";
import { majors } from "../harness/world/local-brokers.ts";
import { OsloProcess, type Answer } from "./support/oslo/process.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import {
  applyOrder,
  brokerApi,
  createWorld,
  destroyWorld,
  isReady,
  readSecret,
  waitForOrder,
  type World,
} from "../harness/world/world.ts";

const ORDER = "nova";
const GRACE_MS = 15_000;
const spec = (passwordGeneration?: number) => ({
  rotation: { interval: "0s", gracePeriod: `${GRACE_MS / 1000}s` },
  deletionPolicy: "Delete",
  ...(passwordGeneration ? { passwordGeneration } : {}),
});

// Both majors, 3.10 first; each node's version is checked against the major it stands for.
const brokers = majors()
  .reverse()
  .map((node) => ({
    node,
    name: node.part,
    major: node.part === "rabbitmq" ? /^4\.3\./ : /^3\.10\./,
    tag: node.part === "rabbitmq" ? "osm43" : "osm310",
  }));

/** Every password and transport URL the test saw; none may appear in the operator's logs. */
const secrets = new Set<string>();
const services: OsloProcess[] = [];
let operator: OperatorProcess | undefined;

/** A service on oslo.messaging with `url` as its transport_url, its servers on topics named `tag`. */
async function startService(url: string, tag: string): Promise<OsloProcess> {
  const service = OsloProcess.start("messaging.py", ["serve", tag], { OS_DEFAULT__TRANSPORT_URL: url }, [
    ...secrets,
  ]);
  services.push(service);
  expect(await service.next(60_000)).toEqual({ ready: true });
  return service;
}

/** A fresh process's one connection with `url`: ok, or the refusal's class and message. */
const probe = (url: string): Promise<Answer> =>
  OsloProcess.once("messaging.py", ["probe"], { OS_DEFAULT__TRANSPORT_URL: url }, [...secrets]);

/** An RPC call through `service` (to its own server, or to the one named `topic`) answered with `text`. */
async function expectCall(service: OsloProcess, text: string, topic?: string, server?: string) {
  const answer = await service.request({ op: "call", text, ...(topic ? { topic } : {}) });
  expect(answer, service.log()).toMatchObject({ ok: true, reply: { text, ...(server ? { server } : {}) } });
}

/** A notification sent through `service` and received by its own listener. */
async function expectNotification(service: OsloProcess, text: string) {
  const answer = await service.request({ op: "notify", text });
  expect(answer, service.log()).toEqual({
    ok: true,
    received: { event_type: "e2e.ping", payload: { text } },
  });
}

// Up to 15 minutes waiting for the operator lock (another file's operator), then its start.
beforeAll(async () => {
  operator = await OperatorProcess.start();
}, 16 * 60_000);

afterAll(async () => {
  for (const service of services) service.kill();
  await operator?.stop();
}, 60_000);

describe.each(brokers)("oslo.messaging through a delivered transport_url, broker $name", (b) => {
  let world: World | undefined;
  const w = (): World => {
    if (!world) throw new Error("no world");
    return world;
  };
  const key = () => ({ cluster: "", namespace: w().tenantNs, name: ORDER });
  const delivered = async () => {
    const data = await readSecret(w(), w().tenantNs, `${ORDER}-credentials`);
    for (const k of ["password", "transport_url"]) if (data[k]) secrets.add(data[k]);
    return data;
  };
  let v1: Record<string, string> = {};
  let old: OsloProcess | undefined;

  beforeAll(async () => {
    world = await createWorld(b.tag, { broker: b.node.broker });
  }, 60_000);

  afterAll(async () => {
    await destroyWorld(world);
  }, 90_000);

  it("is the broker of that version", async () => {
    const overview = (await (await brokerApi(w(), "GET", "/api/overview")).json()) as {
      rabbitmq_version: string;
    };
    expect(overview.rabbitmq_version).toMatch(b.major);
  });

  it("a service's RPC call and notification go through the delivered transport_url", async () => {
    await applyOrder(w(), ORDER, spec());
    await waitForOrder(w(), ORDER, "generation 1 Ready", isReady, 60_000);
    v1 = await delivered();
    expect(v1["username"]).toBe(userName(key(), 1));
    expect(v1["transport_url"]).toMatch(/^rabbit:\/\//);

    old = await startService(v1["transport_url"] ?? "", `${b.tag}-old`);
    await expectCall(old, "first call", undefined, `${b.tag}-old`);
    await expectNotification(old, "first notification");

    // What oslo.messaging declared in the vhost, by its defaults (classic, transient, not exclusive: the
    // queues RabbitMQ 4.x counts as the deprecated feature transient_nonexcl_queues).
    const vhost = encodeURIComponent(v1["vhost"] ?? "");
    const queues = (await (await brokerApi(w(), "GET", `/api/queues/${vhost}`)).json()) as {
      name: string;
      durable: boolean;
      exclusive: boolean;
      type: string;
    }[];
    expect(queues.map((q) => q.name)).toContain(`e2e-${b.tag}-old`);
    const kinds = new Set(queues.map((q) => `${q.type}${q.durable ? " durable" : " transient"}`));
    const used = await brokerApi(w(), "GET", "/api/deprecated-features/used");
    const deprecated = used.ok ? ((await used.json()) as { name: string }[]).map((f) => f.name) : [];
    console.log(
      `${b.name}: oslo.messaging's ${queues.length} queues: ${[...kinds].join(", ")}; ` +
        `deprecated features in use on the node: ${deprecated.join(", ") || "none (or no such API)"}`,
    );
  }, 120_000);

  it("across a rotation: the old service works through the grace, a restarted one with the new URL works, the old URL is refused after the sweep", async () => {
    if (!old) throw new Error("no service on generation 1");
    await applyOrder(w(), ORDER, spec(2));
    const rotated = await waitForOrder(
      w(),
      ORDER,
      "generation 2 delivered",
      (o) => o?.status?.passwordGeneration === 2 && o.status.previousPasswordGeneration === 1,
      60_000,
    );
    const deleteAt = Date.parse(rotated?.status?.previousPasswordDeleteAt ?? "");
    const v2 = await eventually("the Secret to carry generation 2", async () => {
      const data = await delivered();
      return data["username"] === userName(key(), 2) ? data : undefined;
    });
    expect(v2["transport_url"]).not.toBe(v1["transport_url"]);
    expect(v2["vhost"]).toBe(v1["vhost"]);

    // The old service, still running on generation 1's connections, answers right after the switch.
    let calls = 0;
    await expectCall(old, "right after the switch", undefined, `${b.tag}-old`);
    calls++;

    // The service started with the new URL (a restart), beside the old one still running on the old URL.
    const fresh = await startService(v2["transport_url"] ?? "", `${b.tag}-new`);
    await expectCall(fresh, "after the restart", undefined, `${b.tag}-new`);
    await expectNotification(fresh, "after the restart");
    // One vhost: each generation's client reaches the other generation's server.
    await expectCall(fresh, "to the old server", `${b.tag}-old`, `${b.tag}-old`);
    await expectCall(old, "to the new server", `${b.tag}-new`, `${b.tag}-new`);

    // The old service keeps calling through the grace period.
    while (Date.now() < deleteAt - 2_000) {
      await expectCall(old, `grace call ${calls}`, undefined, `${b.tag}-old`);
      calls++;
      await new Promise((r) => setTimeout(r, 500));
    }
    await expectNotification(old, "late in the grace");
    expect(Date.now()).toBeLessThan(deleteAt);
    console.log(`${b.name}: ${calls} RPC calls on the old URL during the grace period, all answered`);
    expect(calls).toBeGreaterThanOrEqual(3);

    // The old service goes (its pod restarted onto the new Secret), and the old user is swept.
    old.kill();
    await old.exited();
    const swept = await waitForOrder(
      w(),
      ORDER,
      "the sweep of generation 1",
      (o) => o?.status?.passwordGeneration === 2 && o.status.previousPasswordGeneration === undefined,
      GRACE_MS + 30_000,
    );
    expect(isReady(swept)).toBe(true);
    expect((await brokerApi(w(), "GET", `/api/users/${userName(key(), 1)}`)).status).toBe(404);

    // A fresh connection with the old URL is refused by authentication; one with the new URL is not.
    const refused = await probe(v1["transport_url"] ?? "");
    console.log(`${b.name}: the old URL after the sweep: ${refused.error}: ${refused.message}`);
    expect(refused.ok).toBe(false);
    expect(refused.error).toBe("AccessRefused");
    expect(refused.message).toMatch(/\(403\) ACCESS_REFUSED - Login was refused/);
    expect(await probe(v2["transport_url"] ?? "")).toEqual({ ok: true });
    await expectCall(fresh, "after the sweep", undefined, `${b.tag}-new`);
    await expectNotification(fresh, "after the sweep");
    await fresh.request({ op: "stop" }).catch(() => undefined);
    fresh.kill();
  }, 150_000);
});

describe("the operator's logs", () => {
  it("hold no password or transport URL", () => {
    if (!operator) throw new Error("no operator");
    // Two brokers, two generations: a password and a transport URL each.
    expect(secrets.size).toBeGreaterThanOrEqual(8);
    const logs = operator.logs();
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      for (const form of [secret, encodeURIComponent(secret)]) expect(logs.includes(form)).toBe(false);
    }
  });
});
