import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../harness/fakes/fake-clock.ts";
import { sleep } from "../base/clock.ts";
import { Controller, type Request } from "./controller.ts";
import { TransientError } from "../base/errors.ts";
import { Lanes } from "./lanes.ts";
import { slowLanes, type SlowLane } from "./slow-lanes.ts";
import { createLogger } from "../base/logging.ts";
import { Metrics } from "./metrics.ts";

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe("Lanes", () => {
  it("hands the lanes' keys out in turn, oldest first within a lane", () => {
    const lanes = new Lanes();
    for (const key of ["a1", "a2", "a3"]) lanes.push("a", key);
    for (const key of ["b1", "b2"]) lanes.push("b", key);
    lanes.push("c", "c1");
    const order = [];
    for (let next = lanes.take(); next; next = lanes.take()) order.push(next.key);
    expect(order).toEqual(["a1", "b1", "c1", "a2", "b2", "a3"]);
    expect(lanes.len()).toBe(0);
  });

  it("gives a lane no more than its budget at once, and its next key when a pass ends", () => {
    const lanes = new Lanes(2);
    for (const key of ["h1", "h2", "h3", "h4"]) lanes.push("hung", key);
    lanes.push("ok", "o1");
    lanes.push("ok", "o2");
    expect([lanes.take(), lanes.take(), lanes.take(), lanes.take()].map((n) => n?.key)).toEqual([
      "h1",
      "o1",
      "h2",
      "o2",
    ]);
    // The hung lane is at its budget: nothing of it is handed out while both its passes run.
    expect(lanes.take()).toBeUndefined();
    lanes.release("ok");
    expect(lanes.take()).toBeUndefined();
    lanes.release("hung");
    expect(lanes.take()).toEqual({ key: "h3", lane: "hung", rank: "urgent" });
    expect(lanes.states()).toEqual([
      { lane: "hung", waiting: ["h4"], running: 2 },
      { lane: "ok", waiting: [], running: 1 },
    ]);
  });

  it("hands urgent keys out before routine ones, and takes turns once the oldest routine key is past the floor", () => {
    const lanes = new Lanes(Infinity, 10_000);
    for (const key of ["r1", "r2", "r3"]) lanes.push("", key, "routine", 0);
    lanes.push("", "u1", "urgent", 5_000);
    lanes.push("", "u2", "urgent", 5_000);
    lanes.push("", "u3", "urgent", 5_000);
    expect(lanes.take(5_000)?.key).toBe("u1");
    // Past the floor: a routine key after each urgent one.
    expect([12_000, 12_000, 12_000, 12_000].map((now) => lanes.take(now)?.key)).toEqual([
      "r1",
      "u2",
      "r2",
      "u3",
    ]);
    expect(lanes.take(12_000)?.key).toBe("r3");
    expect(lanes.take(12_000)).toBeUndefined();
  });

  it("hands out routine keys only when the precedence lets them start, and asks it only for one", () => {
    const lanes = new Lanes(Infinity, 10_000);
    let asked = 0;
    const held = () => (asked++, false);
    lanes.push("a", "u1", "urgent", 0);
    lanes.push("b", "r1", "routine", 0);
    expect(lanes.take(0, held)).toEqual({ key: "u1", lane: "a", rank: "urgent" });
    expect(asked).toBe(0);
    // Past the floor too, a routine key held back waits; the urgent one of another lane goes.
    lanes.push("a", "u2", "urgent", 20_000);
    expect(lanes.take(20_000, held)?.key).toBe("u2");
    expect(lanes.take(20_000, held)).toBeUndefined();
    expect(asked).toBe(2);
    expect(lanes.take(20_000, () => true)).toEqual({ key: "r1", lane: "b", rank: "routine" });
  });

  it("refuses a budget below 1", () => {
    expect(() => new Lanes(0)).toThrow(/at least 1/);
  });

  it("finds the lanes whose oldest pass has run too long while keys wait behind it", () => {
    const states = [
      { lane: "hung", waiting: ["h3"], running: 2, runningSince: 1_000 },
      // Slow but nothing waits: nobody to tell.
      { lane: "busy", waiting: [], running: 2, runningSince: 1_000 },
      { lane: "ok", waiting: ["o3"], running: 2, runningSince: 5_500 },
      { lane: "idle", waiting: ["i1"], running: 0, runningSince: undefined },
    ];
    expect(slowLanes(states, 6_000, 5_000)).toEqual([
      { lane: "hung", waiting: ["h3"], running: 2, slowForMs: 5_000 },
    ]);
    expect(slowLanes(states, 5_999, 5_000)).toEqual([]);
  });
});

describe("Controller with a lane per endpoint", () => {
  /**
   * Passes of the "hung" namespace wait the broker client's 10 s deadline and fail; the others take
   * 100 ms. Four workers, two per lane.
   */
  function setup() {
    const clock = new FakeClock();
    const passes: { request: Request; start: number; end?: number }[] = [];
    const told: { request: Request; lane: SlowLane }[] = [];
    /** The "hung" namespace's broker: it answers again once this is false. */
    const broker = { hung: true };
    const controller = new Controller({
      name: "lanes",
      workers: 4,
      timeoutMs: 120_000,
      transientRequeueMs: 30_000,
      lanes: {
        of: (r) => r.namespace,
        budget: 2,
        slowAfterMs: 5_000,
        slow: (request, lane) => told.push({ request, lane }),
      },
      reconcile: async (request) => {
        const pass: (typeof passes)[number] = { request, start: clock.monotonic() };
        passes.push(pass);
        const hung = request.namespace === "hung" && broker.hung;
        await sleep(clock, hung ? 10_000 : 100);
        pass.end = clock.monotonic();
        if (hung) throw new TransientError("no answer in time");
      },
      clock,
      log: createLogger({
        level: "error",
        destination: new Writable({ write: (_c, _e, done) => done() }),
      }),
      metrics: new Metrics({ processMetrics: false, clock }),
    });
    const running = (lane: string) =>
      passes.filter((p) => p.request.namespace === lane && p.end === undefined).length;
    return { clock, controller, passes, told, running, broker };
  }

  async function advance(clock: FakeClock, ms: number, step = 50): Promise<void> {
    for (let t = 0; t < ms; t += step) {
      clock.advance(step);
      // A pass that ended, then its worker's turn of the event loop before it takes the next key.
      await flush();
      await flush();
    }
  }

  it("lets the healthy lane's passes through while the hung one holds only its budget", async () => {
    const { clock, controller, passes, running } = setup();
    controller.start();
    const t0 = clock.monotonic();
    // The hung broker's objects come first, as in the benchmark: 10 of them, then 10 healthy ones.
    for (let i = 0; i < 10; i++) controller.enqueue({ cluster: "", namespace: "hung", name: `h${i}` });
    for (let i = 0; i < 10; i++) controller.enqueue({ cluster: "", namespace: "ok", name: `o${i}` });
    await flush();
    expect(running("hung")).toBe(2);
    expect(running("ok")).toBe(2);
    // Ten passes of 100 ms, two at a time: half a second, as if the hung broker were not there.
    await advance(clock, 500);
    const healthy = passes.filter((p) => p.request.namespace === "ok");
    expect(healthy.map((p) => p.end !== undefined)).toEqual(Array<boolean>(10).fill(true));
    expect(Math.max(...healthy.map((p) => (p.end ?? Infinity) - t0))).toBeLessThanOrEqual(500);
    // The hung lane never held more than its two workers, and its next keys go in as those end.
    expect(running("hung")).toBe(2);
    expect(passes.filter((p) => p.request.namespace === "hung")).toHaveLength(2);
    await advance(clock, 10_000);
    expect(passes.filter((p) => p.request.namespace === "hung")).toHaveLength(4);
    expect(running("hung")).toBe(2);
    await controller.stop(true);
  });

  it("tells each request waiting in a slow lane why, once while the lane stays busy, and none elsewhere", async () => {
    const { clock, controller, told, broker } = setup();
    controller.start();
    for (let i = 0; i < 6; i++) controller.enqueue({ cluster: "", namespace: "hung", name: `h${i}` });
    for (let i = 0; i < 6; i++) controller.enqueue({ cluster: "", namespace: "ok", name: `o${i}` });
    await advance(clock, 4_900);
    expect(told).toEqual([]);
    await advance(clock, 200);
    // Two hold the lane's workers; the four behind them are told.
    expect(told.map((t) => t.request.name)).toEqual(["h2", "h3", "h4", "h5"]);
    expect(told[0]?.lane).toMatchObject({ lane: "hung", running: 2, slowForMs: 5_000 });
    // The first two fail at 10 s and wait out their retry; the next two run, then h4 and h5 from 20 s,
    // with nothing waiting. Behind them h2 (back early) and h6: only h6 is new to the busy lane.
    await advance(clock, 18_000);
    controller.enqueue({ cluster: "", namespace: "hung", name: "h2" });
    controller.enqueue({ cluster: "", namespace: "hung", name: "h6" });
    await advance(clock, 4_500);
    expect(told.map((t) => t.request.name)).toEqual(["h2", "h3", "h4", "h5", "h6"]);
    // The broker answers again: the retries pass, the lane goes idle and, five minutes later, forgets. A
    // new hang tells its waiting requests again.
    broker.hung = false;
    await advance(clock, 6 * 60_000, 500);
    broker.hung = true;
    for (let i = 0; i < 4; i++) controller.enqueue({ cluster: "", namespace: "hung", name: `h${i}` });
    await advance(clock, 7_500, 500);
    expect(told.map((t) => t.request.name).slice(5)).toEqual(["h2", "h3"]);
    await controller.stop(true);
  });

  it("tells only the first 20 requests of a long backlog, the oldest", async () => {
    // A busy broker with thousands of objects behind it is slow too; an Event for each flooded the API
    // server in the benchmark's restart among 30,000 objects.
    const { clock, controller, told } = setup();
    controller.start();
    for (let i = 0; i < 50; i++) controller.enqueue({ cluster: "", namespace: "hung", name: `h${i}` });
    await advance(clock, 5_100);
    expect(told.map((t) => t.request.name)).toEqual(Array.from({ length: 20 }, (_, i) => `h${i + 2}`));
    await advance(clock, 12_000);
    expect(told).toHaveLength(20);
    await controller.stop(true);
  });
});
