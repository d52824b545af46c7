// The promise of rotation, measured: a consumer that reads the delivered Secret before every AMQP
// connection never fails to log in while the operator process rotates the order on its schedule
// (interval 1m, grace 20s) through two rotations and sweeps the superseded users. The prober's counts
// are printed.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userName } from "../src/orders/rabbitmq/naming.ts";
import { LoginProber } from "../harness/probes/login-prober.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import {
  applyOrder,
  childNames,
  createWorld,
  destroyWorld,
  isReady,
  waitForOrder,
  type World,
} from "../harness/world/world.ts";

const ORDER = "steady";

describe("zero failed logins across rotations, operator process", () => {
  let world: World | undefined;
  let operator: OperatorProcess | undefined;
  let prober: LoginProber | undefined;

  beforeAll(async () => {
    world = await createWorld("zfl");
    operator = await OperatorProcess.start();
  }, 120_000);

  afterAll(async () => {
    try {
      if (prober) {
        await prober.stop();
        console.log(prober.summary());
      }
      await destroyWorld(world);
    } finally {
      await operator?.stop();
    }
  }, 120_000);

  // The instrument first: a prober that could not see a refused login would prove nothing.
  it("counts a refused login and a missing Secret as failures", async () => {
    if (!world) throw new Error("no world");
    const w = world;
    const wrong = randomBytes(12).toString("hex");
    const { amqpHost, amqpPort, adminUsername } = w.broker;
    await w.cluster.core.createNamespacedSecret({
      namespace: w.tenantNs,
      body: {
        metadata: { name: "impostor-credentials" },
        stringData: {
          username: adminUsername,
          transport_url: `rabbit://${encodeURIComponent(adminUsername)}:${wrong}@${amqpHost}:${amqpPort}/`,
        },
      },
    });
    const probe = (order: string) =>
      new LoginProber({ core: w.cluster.core, namespace: w.tenantNs, order, intervalMs: 50, maxAttempts: 3 });
    const refused = probe("impostor").start();
    const counts = await refused.finished();
    console.log(refused.summary());
    expect([counts.attempts, counts.authFailures, counts.otherFailures, counts.successes]).toEqual([
      3, 3, 0, 0,
    ]);
    expect(counts.failureMessages.join(" ")).not.toContain(wrong);
    expect(await probe("absent").start().finished()).toMatchObject({
      attempts: 3,
      authFailures: 0,
      otherFailures: 3,
    });
  }, 30_000);

  it("a consumer re-reading the Secret logs in every time through two rotations and their sweeps", async () => {
    if (!world) throw new Error("no world");
    const w = world;
    const key = { cluster: "", namespace: w.tenantNs, name: ORDER };
    await applyOrder(w, ORDER, {
      rotation: { interval: "1m", gracePeriod: "20s" },
      deletionPolicy: "Delete",
    });
    const first = await waitForOrder(w, ORDER, "generation 1 Ready", isReady, 90_000);
    expect(first?.status?.passwordGeneration).toBe(1);

    prober = new LoginProber({
      core: w.cluster.core,
      namespace: w.tenantNs,
      order: ORDER,
      intervalMs: 250,
      maxDurationMs: 200_000,
    }).start();

    // Two scheduled rotations (about 2 minutes), then the sweep of generation 2, so the prober also
    // runs across the deletion of a superseded user.
    await waitForOrder(w, ORDER, "generation 3", (o) => o?.status?.passwordGeneration === 3, 150_000);
    const swept = await waitForOrder(
      w,
      ORDER,
      "the sweep of generation 2",
      (o) => o?.status?.passwordGeneration === 3 && o.status.previousPasswordGeneration === undefined,
      40_000,
    );
    expect(isReady(swept)).toBe(true);
    expect(await childNames(w, ORDER, "users")).toHaveLength(1);
    // A few more logins with only generation 3 on the broker.
    await new Promise((r) => setTimeout(r, 2_000));

    const counts = await prober.stop();
    console.log(prober.summary());
    prober = undefined;
    expect(counts.failureMessages).toEqual([]);
    expect(counts.authFailures).toBe(0);
    expect(counts.otherFailures).toBe(0);
    expect(counts.successes).toBe(counts.attempts);
    expect(counts.attempts).toBeGreaterThan(100);
    const used = Object.keys(counts.successesByUser);
    expect(used.length).toBeGreaterThanOrEqual(2);
    // The consumer moved through the generations in order and ended on the live one.
    expect(used).toEqual([1, 2, 3].map((g) => userName(key, g)));
  }, 240_000);
});
