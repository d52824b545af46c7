// Rotation in real time, with the operator running as its users run it (`node src/main.ts`, the built-in
// topology controller serving the User and Permission CRs on the local broker). Interval 1m, grace 20s:
// generation 2 appears on schedule, both users log in during the grace period, the old one is refused
// after it with one User left; then the schedule is switched off and a raised passwordGeneration is
// delivered at once. No password or transport URL reaches the logs, the status, the events or /metrics.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseMetrics, sum } from "../harness/probes/prometheus.ts";
import { userChildName, userName, vhostName } from "../src/orders/rabbitmq/naming.ts";
import { eventually } from "../harness/world/kube.ts";
import { amqpLogin } from "../harness/probes/login-prober.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import {
  applyOrder,
  brokerApi,
  childNames,
  createWorld,
  destroyWorld,
  isReady,
  readOrder,
  readSecret,
  waitForOrder,
  worldEvents,
  type World,
} from "../harness/world/world.ts";

const ORDER = "rotor";

/** Removals of `kind` the order controller's watch handed on ("enqueued") or dropped ("filtered"). */
const removals = (metrics: string, kind: string, outcome: string): number =>
  sum(parseMetrics(metrics), "vhost_broker_watch_events_total", {
    controller: "rabbitmqvhost",
    kind,
    event: "delete",
    outcome,
  });
const INTERVAL_MS = 60_000;
const GRACE_MS = 20_000;

describe("rotation in real time, operator process", () => {
  let world: World | undefined;
  let operator: OperatorProcess | undefined;
  /** Every password and transport URL the test saw; none may appear anywhere else. */
  const secrets = new Set<string>();

  const w = (): World => {
    if (!world) throw new Error("no world");
    return world;
  };
  const key = () => ({ cluster: "", namespace: w().tenantNs, name: ORDER });
  const spec = (interval: string, passwordGeneration?: number) => ({
    rotation: { interval, gracePeriod: "20s" },
    deletionPolicy: "Delete",
    ...(passwordGeneration ? { passwordGeneration } : {}),
  });
  const delivered = async () => {
    const data = await readSecret(w(), w().tenantNs, `${ORDER}-credentials`);
    remember(data["password"], data["transport_url"]);
    return data;
  };
  const remember = (...values: (string | undefined)[]) => {
    for (const v of values) if (v) secrets.add(v);
  };
  const at = (time: string | undefined) => Date.parse(time ?? "");

  beforeAll(async () => {
    world = await createWorld("rotrt");
    operator = await OperatorProcess.start();
  }, 120_000);

  afterAll(async () => {
    try {
      await destroyWorld(world);
    } finally {
      await operator?.stop();
    }
  }, 120_000);

  it("rotates on schedule, keeps both users through the grace period, sweeps, and delivers a raise at once", async () => {
    const vhost = vhostName(key());
    await applyOrder(w(), ORDER, spec("1m"));
    const first = await waitForOrder(w(), ORDER, "generation 1 Ready", (o) => isReady(o), 90_000);
    expect(first?.status?.passwordGeneration).toBe(1);
    expect(first?.status?.username).toBe(userName(key(), 1));
    expect(at(first?.status?.nextRotation) - at(first?.status?.lastRotation)).toBe(INTERVAL_MS);
    const v1 = await delivered();
    expect(v1["username"]).toBe(userName(key(), 1));
    expect(v1["vhost"]).toBe(vhost);
    // On the management cluster the delivered address is the bus's own: here, the local broker.
    expect([v1["host"], Number(v1["port"])]).toEqual([w().broker.amqpHost, w().broker.amqpPort]);
    expect(await amqpLogin(v1["transport_url"] ?? "")).toEqual({ kind: "ok" });

    // Generation 2 appears when the schedule is due, without anything touching the order.
    const dueIn = at(first?.status?.nextRotation) - Date.now();
    const second = await waitForOrder(
      w(),
      ORDER,
      "generation 2 on schedule",
      (o) => o?.status?.passwordGeneration === 2,
      dueIn + 30_000,
    );
    const s = second?.status;
    expect(s?.previousPasswordGeneration).toBe(1);
    expect(at(s?.lastRotation)).toBeGreaterThanOrEqual(at(first?.status?.nextRotation));
    // The grace period runs from the pass that saw the Secret carry generation 2: the same pass as the
    // switch, or one a second or two later (times in whole seconds).
    const grace = at(s?.previousPasswordDeleteAt) - at(s?.lastRotation);
    expect(grace).toBeGreaterThanOrEqual(GRACE_MS);
    expect(grace).toBeLessThanOrEqual(GRACE_MS + 5_000);
    expect(at(s?.nextRotation) - at(s?.lastRotation)).toBe(INTERVAL_MS);
    expect(s?.username).toBe(userName(key(), 2));
    const v2 = await eventually("the Secret to carry generation 2", async () => {
      const data = await delivered();
      return data["username"] === userName(key(), 2) ? data : undefined;
    });
    expect(v2["password"]).not.toBe(v1["password"]);

    // During the grace period both users log in: the old one with the Secret saved before the switch
    // (as a consumer that has not re-read it yet), the new one with what is delivered now.
    const passwordV1 = await readSecret(w(), w().cpNs, `${vhost}-vhost-password-v1`);
    const passwordV2 = await readSecret(w(), w().cpNs, `${vhost}-vhost-password-v2`);
    remember(passwordV1["password"], passwordV2["password"]);
    expect(passwordV1["password"]).toBe(v1["password"]);
    expect(passwordV2["password"]).toBe(v2["password"]);
    expect(await amqpLogin(v1["transport_url"] ?? "")).toEqual({ kind: "ok" });
    expect(await amqpLogin(v2["transport_url"] ?? "")).toEqual({ kind: "ok" });
    expect(Date.now()).toBeLessThan(at(s?.previousPasswordDeleteAt));
    expect(await childNames(w(), ORDER, "users")).toEqual([userChildName(key(), 1), userChildName(key(), 2)]);

    // After the grace period the old user is refused and exactly one User remains.
    const deleteAt = at(s?.previousPasswordDeleteAt);
    await new Promise((r) => setTimeout(r, Math.max(0, deleteAt - Date.now())));
    const swept = await waitForOrder(
      w(),
      ORDER,
      "the sweep after the grace period",
      (o) => o?.status?.previousPasswordGeneration === undefined,
      15_000,
    );
    expect(swept?.status?.previousPasswordDeleteAt).toBeUndefined();
    expect(swept?.status?.passwordGeneration).toBe(2);
    expect(isReady(swept)).toBe(true);
    const refused = await eventually(
      "the old user to be refused",
      async () => {
        const outcome = await amqpLogin(v1["transport_url"] ?? "");
        return outcome.kind === "ok" ? undefined : outcome;
      },
      15_000,
    );
    expect(refused.kind).toBe("auth");
    expect(await amqpLogin(v2["transport_url"] ?? "")).toEqual({ kind: "ok" });
    await eventually("one User and one Permission", async () => {
      const users = await childNames(w(), ORDER, "users");
      const permissions = await childNames(w(), ORDER, "permissions");
      return users.length === 1 && permissions.length === 1 ? true : undefined;
    });
    expect(await childNames(w(), ORDER, "users")).toEqual([userChildName(key(), 2)]);
    expect((await brokerApi(w(), "GET", `/api/users/${userName(key(), 1)}`)).status).toBe(404);
    // The sweep waits for the old User's removal alone: it deleted the old Permission and password
    // Secret quietly, and their removals brought the order no pass.
    await eventually("the quiet removals dropped by the order's watch", async () => {
      if (!operator) throw new Error("no operator");
      const metrics = await operator.metrics();
      return removals(metrics, "Permission", "filtered") >= 1 && removals(metrics, "Secret", "filtered") >= 1
        ? true
        : undefined;
    });

    // The schedule off: nextRotation goes, generation 2 stays delivered.
    await applyOrder(w(), ORDER, spec("0s"));
    const off = await waitForOrder(
      w(),
      ORDER,
      "the schedule off",
      (o) => o?.status?.nextRotation === undefined && isReady(o),
      15_000,
    );
    expect(off?.status?.passwordGeneration).toBe(2);

    // A raise to 4 rotates at once, straight to 4 (3 is never created).
    const raised = Date.now();
    await applyOrder(w(), ORDER, spec("0s", 4));
    const fourth = await waitForOrder(
      w(),
      ORDER,
      "generation 4 after the raise",
      (o) => o?.status?.passwordGeneration === 4 && isReady(o),
      20_000,
    );
    console.log(`raise to generation 4 delivered after ${Date.now() - raised} ms`);
    expect(fourth?.status?.nextRotation).toBeUndefined();
    expect(fourth?.status?.previousPasswordGeneration).toBe(2);
    const v4 = await delivered();
    expect(v4["username"]).toBe(userName(key(), 4));
    expect(await amqpLogin(v4["transport_url"] ?? "")).toEqual({ kind: "ok" });
    expect(await amqpLogin(v2["transport_url"] ?? "")).toEqual({ kind: "ok" });
    expect(await childNames(w(), ORDER, "users")).toEqual([userChildName(key(), 2), userChildName(key(), 4)]);
    expect((await brokerApi(w(), "GET", `/api/users/${userName(key(), 3)}`)).status).toBe(404);
    const passwordV4 = await readSecret(w(), w().cpNs, `${vhost}-vhost-password-v4`);
    remember(passwordV4["password"]);
  }, 240_000);

  it("writes no password or transport URL into logs, status, events or metrics", async () => {
    if (!operator) throw new Error("no operator");
    expect(secrets.size).toBeGreaterThanOrEqual(6);
    const order = await readOrder(w(), ORDER);
    const events = await worldEvents(w());
    expect(events.some((e) => e.reason === "Rotated")).toBe(true);
    const logs = operator.logs();
    expect(logs.length).toBeGreaterThan(0);
    const texts = {
      logs,
      order: JSON.stringify(order),
      events: JSON.stringify(events),
      metrics: await operator.metrics(),
    };
    for (const [where, text] of Object.entries(texts)) {
      for (const secret of secrets) {
        for (const form of [secret, encodeURIComponent(secret)]) {
          expect(text.includes(form), `a secret in the ${where}`).toBe(false);
        }
      }
    }
  }, 30_000);
});
