import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../harness/fakes/fake-clock.ts";
import { Precedence } from "./precedence.ts";
import { RateLimiter, defaultRateLimiterOptions } from "./rate-limiter.ts";
import { WorkQueue, type RankOptions } from "./work-queue.ts";

function setup() {
  const clock = new FakeClock();
  const queue = new WorkQueue(clock, new RateLimiter(clock));
  return { clock, queue };
}

async function take(queue: WorkQueue): Promise<string | undefined> {
  return (await queue.get()).key;
}

describe("WorkQueue", () => {
  it("keeps a key queued only once however often it is added", async () => {
    const { queue } = setup();
    queue.add("a");
    queue.add("b");
    queue.add("a");
    expect(queue.len()).toBe(2);
    expect(await take(queue)).toBe("a");
    expect(await take(queue)).toBe("b");
    expect(queue.len()).toBe(0);
  });

  it("never hands a key to a second worker while the first holds it", async () => {
    const { queue } = setup();
    queue.add("a");
    expect(await take(queue)).toBe("a");
    queue.add("a");
    queue.add("b");
    // "a" is held, so only "b" is available.
    expect(await take(queue)).toBe("b");
    expect(queue.len()).toBe(0);
    let second: string | undefined;
    void queue.get().then((n) => (second = n.key));
    await Promise.resolve();
    expect(second).toBeUndefined();
    queue.done("a");
    await Promise.resolve();
    expect(second).toBe("a");
  });

  it("processes a key added during processing once more after done, and only once", async () => {
    const { queue } = setup();
    queue.add("a");
    await take(queue);
    queue.add("a");
    queue.add("a");
    expect(queue.len()).toBe(0);
    queue.done("a");
    expect(queue.len()).toBe(1);
    expect(await take(queue)).toBe("a");
    queue.done("a");
    expect(queue.len()).toBe(0);
  });

  it("wakes a waiting worker when a key arrives", async () => {
    const { clock, queue } = setup();
    const next = queue.get();
    queue.add("x");
    await expect(next).resolves.toEqual({ key: "x", queuedAt: clock.monotonic(), shutdown: false });
  });

  it("hands a key out with the time of its earliest add since it was last handed out", async () => {
    const { clock, queue } = setup();
    const start = clock.monotonic();
    queue.addAfter("a", 1_000);
    clock.advance(1_000);
    clock.advance(5_000);
    queue.add("a");
    expect(await queue.get()).toEqual({ key: "a", queuedAt: start + 1_000, shutdown: false });
    // Added again while held: queued from then, handed out after done.
    clock.advance(2_000);
    queue.add("a");
    clock.advance(3_000);
    queue.done("a");
    expect(await queue.get()).toEqual({ key: "a", queuedAt: start + 8_000, shutdown: false });
  });

  it("backs off a failing key exponentially and starts over after forget", async () => {
    const { clock, queue } = setup();
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      queue.addRateLimited("a");
      const before = clock.now();
      for (let ms = 0; queue.len() === 0 && ms < 1000; ms++) clock.advance(1);
      waits.push(clock.now() - before);
      queue.done((await queue.get()).key ?? "");
    }
    expect(waits).toEqual([5, 10, 20, 40]);
    expect(queue.numRequeues("a")).toBe(4);
    queue.forget("a");
    expect(queue.numRequeues("a")).toBe(0);
    queue.addRateLimited("a");
    clock.advance(5);
    expect(queue.len()).toBe(1);
  });

  it("caps a key's backoff at 1000 s", () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter(clock);
    let delay = 0;
    for (let i = 0; i < 40; i++) delay = limiter.when("a");
    expect(delay).toBe(1_000_000);
  });

  it("keeps the earliest deadline of delayed adds", () => {
    const { clock, queue } = setup();
    queue.addAfter("a", 1000);
    queue.addAfter("a", 100);
    queue.addAfter("a", 5000);
    clock.advance(99);
    expect(queue.len()).toBe(0);
    clock.advance(1);
    expect(queue.len()).toBe(1);
    clock.advance(10_000);
    expect(queue.len()).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("keeps the earliest deadline also across a step of the wall clock", () => {
    // The chaos suite's case: a pass during a 300 s backward step requeues for 300 s; the step ends
    // and a later pass asks for 10 s. The 10 s must win, since the first timer fires 300 s on.
    const { clock, queue } = setup();
    clock.stepWall(-300_000);
    queue.addAfter("a", 300_000);
    clock.advance(15_000);
    clock.stepWall(300_000);
    queue.addAfter("a", 10_000);
    clock.advance(9_999);
    expect(queue.len()).toBe(0);
    clock.advance(1);
    expect(queue.len()).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
  });
  it("adds at once when the delay is not positive", () => {
    const { queue } = setup();
    queue.addAfter("a", 0);
    expect(queue.len()).toBe(1);
  });

  it("on shutdown drops waiting keys, ignores adds and waits for keys in flight", async () => {
    const { clock, queue } = setup();
    queue.add("a");
    queue.add("b");
    queue.addAfter("c", 10);
    expect(await take(queue)).toBe("a");
    let drained = false;
    void queue.shutDownWithDrain().then(() => (drained = true));
    await expect(queue.get()).resolves.toMatchObject({ shutdown: true });
    queue.add("d");
    clock.advance(100);
    expect(queue.len()).toBe(0);
    await Promise.resolve();
    expect(drained).toBe(false);
    queue.done("a");
    await Promise.resolve();
    expect(drained).toBe(true);
  });

  it("holds one queue's routine keys to one at a time while another's urgent pass is fresh", async () => {
    const clock = new FakeClock();
    const precedence = new Precedence(clock, { holdMs: 1_000, paceMs: 0 });
    const ranked = (rank: "urgent" | "routine"): RankOptions => ({
      of: () => rank,
      ageFloorMs: Infinity,
      precedence,
    });
    const orders = new WorkQueue(clock, new RateLimiter(clock), undefined, undefined, ranked("urgent"));
    const checks = new WorkQueue(clock, new RateLimiter(clock), undefined, undefined, ranked("routine"));
    for (const key of ["c1", "c2", "c3"]) checks.add(key);
    orders.add("new");
    expect(await take(orders)).toBe("new");
    expect(await take(checks)).toBe("c1");
    const worker: (string | undefined)[] = [];
    void checks.get().then((n) => worker.push(n.key));
    await Promise.resolve();
    expect(worker).toEqual([]);
    // The routine pass's end lets the next one start, though the urgent pass still runs, after a turn of
    // the event loop.
    checks.done("c1");
    await Promise.resolve();
    expect(worker).toEqual([]);
    clock.advance(0);
    await Promise.resolve();
    expect(worker).toEqual(["c2"]);
    // Once the urgent pass's hold is over, the routine keys go as fast as the workers take them.
    void checks.get().then((n) => worker.push(n.key));
    clock.advance(999);
    await Promise.resolve();
    expect(worker).toEqual(["c2"]);
    clock.advance(1);
    await Promise.resolve();
    expect(worker).toEqual(["c2", "c3"]);
    orders.done("new");
  });

  it("releases a worker that waits when the queue shuts down", async () => {
    const { queue } = setup();
    const waiting = queue.get();
    await queue.shutDownWithDrain();
    await expect(waiting).resolves.toEqual({ key: undefined, shutdown: true });
  });
});

describe("RateLimiter", () => {
  it("lets a burst of 100 distinct keys through, then spaces them at 10 per second", () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter(clock, { ...defaultRateLimiterOptions, baseDelayMs: 0 });
    const delays = Array.from({ length: 103 }, (_, i) => limiter.when(`k${i}`));
    expect(delays.slice(0, 100).every((d) => d === 0)).toBe(true);
    expect(delays.slice(100)).toEqual([100, 200, 300]);
    // A second later ten tokens came back: three pay the debt, the next key passes at once.
    clock.advance(1000);
    expect(limiter.when("late")).toBe(0);
  });
});
