// The gatekeeper around one pass, on plain objects: the order of the three groups at entry and exit,
// the frozen copies of validating plugins, the schema check of mutating output, rejections, exits on
// every pass, metrics and logging.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { GATEKEEPER_API_VERSION, type GatekeeperPlugin } from "../../src/gatekeeper/api.ts";
import { Gatekeeper } from "../../src/gatekeeper/gatekeeper.ts";
import { GatekeeperMetrics } from "../../src/gatekeeper/metrics.ts";
import { entryOrder, exitOrder } from "../../src/gatekeeper/order.ts";
import { rabbitMQVhostKind } from "../../src/api/index.ts";
import { TransientError } from "../../src/runtime/base/errors.ts";
import type { KubeObject } from "../../src/runtime/port/kube-rest.ts";
import { RecordingLog, gatekeeperOf, order, recorder, target } from "./support.ts";

const mutating = (
  name: string,
  entry?: (o: KubeObject) => unknown,
  exit?: (s: never) => unknown,
): GatekeeperPlugin => ({
  apiVersion: GATEKEEPER_API_VERSION,
  name,
  mutating: {
    RabbitMQVhost: {
      ...(entry ? { entry: (_c: unknown, o: never) => entry(o) } : {}),
      ...(exit ? { exit: (_c: unknown, _o: unknown, s: never) => exit(s) } : {}),
    } as never,
  },
});

describe("the order of the groups", () => {
  it("enters custom, default, mandatory in their order, and exits mandatory, default, custom backwards", async () => {
    const calls: string[] = [];
    const gatekeeper = gatekeeperOf({
      mandatory: [recorder("m1", calls), recorder("m2", calls)],
      default: [recorder("d1", calls), recorder("d2", calls)],
      custom: [recorder("c1", calls), recorder("c2", calls)],
    });
    const pass = await gatekeeper.enter("RabbitMQVhost", order(), target());
    await pass.wrap(async () => ({}));
    expect(calls).toEqual([
      ...["c1", "c2", "d1", "d2", "m1", "m2"].map((n) => `${n}:entry`),
      ...["m2", "m1", "d2", "d1", "c2", "c1"].map((n) => `${n}:exit:succeeded`),
    ]);
  });

  it("is the same as the pure order functions", () => {
    const groups = { mandatory: ["m"], default: ["d1", "d2"], custom: ["c"] };
    expect(entryOrder(groups).map((e) => e.plugin)).toEqual(["c", "d1", "d2", "m"]);
    expect(exitOrder(groups).map((e) => `${e.group}:${e.plugin}`)).toEqual([
      "mandatory:m",
      "default:d2",
      "default:d1",
      "custom:c",
    ]);
  });

  it("calls a plugin only for the kinds it names", async () => {
    const calls: string[] = [];
    const gatekeeper = gatekeeperOf({ custom: [recorder("vhosts-only", calls, "Vhost")] });
    const pass = await gatekeeper.enter("RabbitMQVhost", order(), target());
    await pass.wrap(async () => ({}));
    expect(calls).toEqual([]);
  });
});

describe("validating plugins", () => {
  it("get a frozen copy: a write to it throws and rejects the pass, naming the plugin", async () => {
    const sneaky: GatekeeperPlugin = {
      apiVersion: GATEKEEPER_API_VERSION,
      name: "sneaky",
      validating: {
        RabbitMQVhost: {
          entry(_context, object) {
            (object.spec as { passwordGeneration?: number }).passwordGeneration = 7;
          },
        },
      },
    };
    const read = order();
    const pass = await gatekeeperOf({ custom: [sneaky] }).enter("RabbitMQVhost", read, target());
    expect(pass.rejection?.message).toMatch(
      /^gatekeeper plugin "sneaky" rejected this RabbitMQVhost: .*(not extensible|read only)/,
    );
    expect(read.spec).not.toHaveProperty("passwordGeneration");
    expect(pass.object).toBe(read);
  });

  it("read frozen copies through their port, never the cache's own objects", async () => {
    const cached: KubeObject = { metadata: { name: "other", namespace: "t" }, spec: { tier: "gold" } };
    const pass = target();
    // The port hands out the very objects it holds, as an informer's cache does.
    pass.kube.list = async () => [cached];
    const meddler: GatekeeperPlugin = {
      apiVersion: GATEKEEPER_API_VERSION,
      name: "meddler",
      validating: {
        RabbitMQVhost: {
          async entry(context) {
            const [other] = await context.kube.list(rabbitMQVhostKind, "t", "");
            (other as { spec: { tier: string } }).spec.tier = "free";
          },
        },
      },
    };
    const entered = await gatekeeperOf({ custom: [meddler] }).enter("RabbitMQVhost", order(), pass);
    expect(entered.rejection?.message).toMatch(/"meddler" rejected .*(read only|not extensible)/);
    expect(cached.spec).toEqual({ tier: "gold" });
  });

  it("cannot change the status an exit hook sees either", async () => {
    const sneaky: GatekeeperPlugin = {
      apiVersion: GATEKEEPER_API_VERSION,
      name: "sneaky-exit",
      validating: {
        RabbitMQVhost: {
          exit(_context, _object, status) {
            (status as { vhost?: string }).vhost = "other";
          },
        },
      },
    };
    const pass = await gatekeeperOf({ custom: [sneaky] }).enter("RabbitMQVhost", order(), target());
    const written = await pass.exit({ vhost: "mine" });
    expect(written).toEqual({ vhost: "mine" });
    await expect(pass.wrap(async () => ({}))).rejects.toThrow(/"sneaky-exit" failed at the exit/);
  });
});

describe("mutating plugins", () => {
  it("change the spec for the pass only; the object as read is untouched", async () => {
    const read = order();
    const clamp = mutating("clamp", (o) => ({
      ...o,
      spec: { ...(o["spec"] as object), rotation: { interval: "20s" } },
    }));
    const pass = await gatekeeperOf({ default: [clamp] }).enter("RabbitMQVhost", read, target());
    expect(pass.rejection).toBeUndefined();
    expect(pass.object["spec"]).toMatchObject({ rotation: { interval: "20s" } });
    expect(read.spec.rotation.interval).toBe("8760h");
  });

  it("may not add a field the kind's schema does not know", async () => {
    const adder = mutating("adder", (o) => ({ ...o, spec: { ...(o["spec"] as object), replicas: 3 } }));
    const pass = await gatekeeperOf({ default: [adder] }).enter("RabbitMQVhost", order(), target());
    expect(pass.rejection?.message).toBe(
      'gatekeeper plugin "adder" rejected this RabbitMQVhost: its output is refused: new fields are not allowed: spec.replicas',
    );
  });

  it("may not break the schema, nor touch metadata or status", async () => {
    const bad = mutating("bad", (o) => ({
      ...o,
      spec: { ...(o["spec"] as object), deletionPolicy: "Sometimes" },
    }));
    const relabel = mutating("relabel", (o) => ({
      ...o,
      metadata: { ...(o.metadata ?? {}), labels: { a: "b" } },
    }));
    const first = await gatekeeperOf({ custom: [bad] }).enter("RabbitMQVhost", order(), target());
    expect(first.rejection?.message).toMatch(/"bad" .*spec\.deletionPolicy/);
    const second = await gatekeeperOf({ custom: [relabel] }).enter("RabbitMQVhost", order(), target());
    expect(second.rejection?.message).toMatch(
      /"relabel" .*it changed metadata, and only the spec may change/,
    );
  });

  it("set the status to write at exit, and a new status field fails the pass with the others' status written", async () => {
    const note = mutating("note", undefined, (s: Record<string, unknown>) => ({ ...s, vhost: "noted" }));
    const adder = mutating("status-adder", undefined, (s: Record<string, unknown>) => ({ ...s, extra: 1 }));
    const pass = await gatekeeperOf({ default: [note], custom: [adder] }).enter(
      "RabbitMQVhost",
      order(),
      target(),
    );
    const written = await pass.exit({ observedGeneration: 1 });
    expect(written).toEqual({ observedGeneration: 1, vhost: "noted" });
    await expect(pass.wrap(async () => "done")).rejects.toThrow(
      new TransientError(
        'gatekeeper plugin "status-adder" failed at the exit of this RabbitMQVhost: its status is refused: new fields are not allowed: extra',
      ),
    );
  });
});

describe("failures", () => {
  it("a hook past its deadline fails, its signal aborts, and what it does later is discarded", async () => {
    let aborted: unknown;
    let settleLate: (() => void) | undefined;
    const stuck: GatekeeperPlugin = {
      apiVersion: GATEKEEPER_API_VERSION,
      name: "stuck",
      validating: {
        RabbitMQVhost: {
          entry: (context) =>
            new Promise<void>((_, reject) => {
              context.signal?.addEventListener("abort", () => (aborted = context.signal?.reason));
              settleLate = () => reject(new Error("too late"));
            }),
          exit: () => new Promise<void>(() => undefined),
        },
      },
    };
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const gatekeeper = gatekeeperOf({ custom: [stuck] }, new RecordingLog(), 50);
      const pass = await gatekeeper.enter("RabbitMQVhost", order(), target());
      expect(pass.rejection?.message).toBe(
        'gatekeeper plugin "stuck" rejected this RabbitMQVhost: it did not answer within 0.05 s',
      );
      expect(String(aborted)).toMatch(/did not answer within 0.05 s/);
      settleLate?.();
      // The exit hooks run on the rejected pass, and the stuck one fails there too.
      await expect(pass.wrap(async () => ({}))).rejects.toThrow(
        'gatekeeper plugin "stuck" failed at the exit of this RabbitMQVhost: it did not answer within 0.05 s',
      );
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  const refuser = (name: string, calls: string[]): GatekeeperPlugin => ({
    apiVersion: GATEKEEPER_API_VERSION,
    name,
    validating: {
      RabbitMQVhost: {
        entry() {
          calls.push(`${name}:entry`);
          throw new Error("over quota (password=hunter2)");
        },
        exit: (context) => void calls.push(`${name}:exit:${context.outcome}`),
      },
    },
  });

  it("a throw at entry stops the entries, and every plugin's exit still runs", async () => {
    const calls: string[] = [];
    const gatekeeper = gatekeeperOf({
      custom: [recorder("c1", calls), refuser("quota", calls)],
      default: [recorder("d1", calls)],
    });
    const pass = await gatekeeper.enter("RabbitMQVhost", order(), target());
    expect(pass.rejection?.plugin).toBe("quota");
    expect(pass.rejection?.message).not.toContain("hunter2");
    await pass.wrap(async () => ({}));
    expect(calls).toEqual([
      "c1:entry",
      "quota:entry",
      "d1:exit:rejected",
      "quota:exit:rejected",
      "c1:exit:rejected",
    ]);
  });

  it("exit hooks run after a reconcile error, which stays the pass's error", async () => {
    const calls: string[] = [];
    const pass = await gatekeeperOf({ custom: [recorder("c1", calls)] }).enter(
      "RabbitMQVhost",
      order(),
      target(),
    );
    await expect(
      pass.wrap(async () => {
        throw new TransientError("the broker is down");
      }),
    ).rejects.toThrow("the broker is down");
    expect(calls).toEqual(["c1:entry", "c1:exit:failed"]);
  });

  it("backs off a rejected object, doubling, and forgets it once admitted", async () => {
    let refuse = true;
    const gate: GatekeeperPlugin = {
      apiVersion: GATEKEEPER_API_VERSION,
      name: "gate",
      validating: {
        RabbitMQVhost: {
          entry() {
            if (refuse) throw new Error("no");
          },
        },
      },
    };
    const gatekeeper = new Gatekeeper({
      plugins: { mandatory: [], default: [], custom: [gate] },
      log: new RecordingLog(),
      clock: { now: () => 0, monotonic: () => 0 },
      backoff: { baseMs: 1000, capMs: 3000 },
    });
    const delays = [];
    for (let i = 0; i < 4; i++)
      delays.push((await gatekeeper.enter("RabbitMQVhost", order(), target())).rejection?.retryAfterMs);
    expect(delays).toEqual([1000, 2000, 3000, 3000]);
    refuse = false;
    expect((await gatekeeper.enter("RabbitMQVhost", order(), target())).rejection).toBeUndefined();
    refuse = true;
    expect((await gatekeeper.enter("RabbitMQVhost", order(), target())).rejection?.retryAfterMs).toBe(1000);
  });

  it("a teardown cannot be vetoed: entry throws are logged, and mutations ignored", async () => {
    const calls: string[] = [];
    const log = new RecordingLog();
    const flip = mutating("flip", (o) => ({
      ...o,
      spec: { ...(o["spec"] as object), deletionPolicy: "Delete" },
    }));
    const gatekeeper = gatekeeperOf({ custom: [refuser("quota", calls), flip] });
    const pass = await gatekeeper.enter("RabbitMQVhost", order(), target(true, log));
    expect(pass.rejection).toBeUndefined();
    expect(pass.object["spec"]).not.toHaveProperty("deletionPolicy");
    expect(log.lines.some((l) => l.level === "warn" && /cannot be vetoed/.test(l.msg ?? ""))).toBe(true);
  });
});

it("counts and times every invocation, and logs each with the plugin's name", async () => {
  const registry = new Registry();
  const log = new RecordingLog();
  const calls: string[] = [];
  const gatekeeper = new Gatekeeper({
    plugins: { mandatory: [], default: [recorder("d1", calls)], custom: [] },
    log,
    clock: { now: () => 0, monotonic: () => 0 },
    metrics: new GatekeeperMetrics(registry),
  });
  const pass = await gatekeeper.enter("RabbitMQVhost", order(), target(false, log));
  await pass.wrap(async () => ({}));
  const text = await registry.metrics();
  expect(text).toContain(
    'vhost_broker_gatekeeper_plugin_invocations_total{plugin="d1",group="default",kind="RabbitMQVhost",hook="entry",result="ok"} 1',
  );
  expect(text).toContain(
    'vhost_broker_gatekeeper_plugin_duration_seconds_count{plugin="d1",kind="RabbitMQVhost",hook="exit"} 1',
  );
  const invoked = log.lines.filter((l) => l.msg === "gatekeeper plugin invoked").map((l) => l.obj);
  expect(invoked).toEqual([
    expect.objectContaining({ plugin: "d1", hook: "entry", result: "ok" }),
    expect.objectContaining({ plugin: "d1", hook: "exit", result: "ok" }),
  ]);
});
