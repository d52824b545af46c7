import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../harness/fakes/fake-clock.ts";
import { KubeApiError, type KubeObject, type KubeRest } from "../port/kube-rest.ts";
import { LeaderElector } from "./leader-election.ts";
import { LeaseFence } from "./lease-fence.ts";
import { createLogger } from "../base/logging.ts";

const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** An in-memory Lease endpoint with resourceVersion checks; `down` makes every call fail. */
function leaseApi() {
  let stored: KubeObject | undefined;
  let version = 0;
  const state = { down: false, writes: 0 };
  const rest = {
    request: async (method: string, path: string, options: { body?: KubeObject } = {}) => {
      if (state.down) throw new Error("connect ECONNREFUSED");
      if (method === "GET") {
        if (!stored) throw new KubeApiError(method, path, 404, "NotFound", "");
        return structuredClone(stored);
      }
      const body = options.body!;
      if (method === "PUT" && body.metadata?.resourceVersion !== stored?.metadata?.resourceVersion) {
        throw new KubeApiError(method, path, 409, "Conflict", "");
      }
      if (method === "POST" && stored) throw new KubeApiError(method, path, 409, "AlreadyExists", "");
      state.writes++;
      stored = { ...body, metadata: { ...body.metadata, resourceVersion: String(++version) } };
      return structuredClone(stored);
    },
  } as unknown as KubeRest;
  return {
    rest,
    state,
    holder: () => (stored?.spec as { holderIdentity?: string } | undefined)?.holderIdentity,
  };
}

function elector(
  rest: KubeRest,
  clock: FakeClock,
  identity: string,
  statuses: boolean[] = [],
  fence?: LeaseFence,
) {
  return new LeaderElector({
    rest,
    namespace: "ns",
    name: "lease",
    identity,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    clock,
    log: createLogger({ level: "fatal" }),
    onStatus: (leading) => statuses.push(leading),
    ...(fence ? { fence } : {}),
  });
}

/** Advances in steps, letting the loops run between them, until `until` holds or `maxMs` passed. */
async function run(clock: FakeClock, maxMs: number, until: () => boolean = () => false, step = 100) {
  const start = clock.monotonic();
  while (!until() && clock.monotonic() - start < maxMs) {
    clock.advance(step);
    await flush();
  }
  return clock.monotonic() - start;
}

describe("LeaderElector", () => {
  it("acquires a free Lease, keeps a second candidate out, and hands over on release", async () => {
    const clock = new FakeClock();
    const api = leaseApi();
    const a = elector(api.rest, clock, "a");
    const b = elector(api.rest, clock, "b");
    const stop = new AbortController();
    expect(await a.acquire(stop.signal)).toBe(true);
    expect(api.holder()).toBe("a");
    let bLeads = false;
    void b.acquire(stop.signal).then((v) => (bLeads = v));
    const renewing = a.keepRenewing(stop.signal);
    for (let t = 0; t < 60_000; t += 500) {
      clock.advance(500);
      await flush();
    }
    expect(bLeads).toBe(false);
    expect(api.holder()).toBe("a");
    await a.release();
    expect(api.holder()).toBe("");
    for (let t = 0; t < 5_000 && !bLeads; t += 500) {
      clock.advance(500);
      await flush();
    }
    expect(bLeads).toBe(true);
    expect(api.holder()).toBe("b");
    stop.abort();
    await renewing;
  });

  it("gives up leadership once no renewal succeeded within the renew deadline", async () => {
    const clock = new FakeClock();
    const api = leaseApi();
    const statuses: boolean[] = [];
    const a = elector(api.rest, clock, "a", statuses);
    const stop = new AbortController();
    await a.acquire(stop.signal);
    let outcome: boolean | undefined;
    void a.keepRenewing(stop.signal).then((v) => (outcome = v));
    clock.advance(2_000);
    await flush();
    api.state.down = true;
    const downAt = clock.now();
    while (outcome === undefined && clock.now() - downAt < 30_000) {
      clock.advance(500);
      await flush();
    }
    expect(outcome).toBe(false);
    // The last renewal was at downAt; the deadline (10 s) is checked on the retry ticks (2 s).
    expect(clock.now() - downAt).toBe(10_000);
    expect(a.isLeader()).toBe(false);
    expect(statuses).toEqual([true, false]);
  });

  it("warns of each failed Lease attempt and logs the loss as an error", async () => {
    const clock = new FakeClock();
    const api = leaseApi();
    const lines: { level: string; msg: string }[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as { level: string; msg: string });
        done();
      },
    });
    const a = new LeaderElector({
      rest: api.rest,
      namespace: "ns",
      name: "lease",
      identity: "a",
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      clock,
      log: createLogger({ level: "info", destination }),
    });
    const stop = new AbortController();
    await a.acquire(stop.signal);
    let outcome: boolean | undefined;
    void a.keepRenewing(stop.signal).then((v) => (outcome = v));
    api.state.down = true;
    await run(clock, 30_000, () => outcome !== undefined, 500);
    expect(outcome).toBe(false);
    const failed = lines.filter((l) => l.msg === "Lease attempt failed");
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((l) => l.level === "warn")).toBe(true);
    expect(lines.filter((l) => l.level === "error").map((l) => l.msg)).toEqual([
      "lost the leader Lease: no renewal within the renew deadline",
    ]);
  });

  it("waits out the lease duration of a holder that stopped renewing, then takes over", async () => {
    const clock = new FakeClock();
    const api = leaseApi();
    const a = elector(api.rest, clock, "a");
    const b = elector(api.rest, clock, "b");
    const stop = new AbortController();
    await a.acquire(stop.signal);
    // "a" dies without releasing; "b" first sees the record now.
    const diedAt = clock.now();
    let tookAt: number | undefined;
    void b.acquire(stop.signal).then(() => (tookAt = clock.now()));
    while (tookAt === undefined && clock.now() - diedAt < 60_000) {
      clock.advance(100);
      await flush();
    }
    expect(api.holder()).toBe("b");
    expect(tookAt! - diedAt).toBeGreaterThanOrEqual(15_000);
    expect(tookAt! - diedAt).toBeLessThanOrEqual(15_000 + 2_400 + 100);
    stop.abort();
  });

  it("steps down on time by its monotonic clock when the wall clock is stepped back, and a standby waits by its own", async () => {
    const clock = new FakeClock();
    const api = leaseApi();
    const log = createLogger({ level: "fatal" });
    const fence = new LeaseFence({ clock, holdMs: 10_000, log, onLapsed: () => undefined });
    const a = elector(api.rest, clock, "a", [], fence);
    const stop = new AbortController();
    await a.acquire(stop.signal);
    let kept: boolean | undefined;
    void a.keepRenewing(stop.signal).then((v) => (kept = v));
    await run(clock, 4_000);
    // The leader is partitioned from the API server, and its wall clock jumps back an hour: a
    // Date.now() deadline would now lie an hour away.
    api.state.down = true;
    const partitionedAt = clock.monotonic();
    clock.stepWall(-3_600_000);
    const tookMs = await run(clock, 60_000, () => kept !== undefined);
    expect(kept).toBe(false);
    // The last renewal succeeded at most a retry period before the partition: the renew deadline after it.
    expect(tookMs).toBeGreaterThan(10_000 - 2_000);
    expect(tookMs).toBeLessThanOrEqual(10_000);
    expect(fence.holds()).toBe(false);
    expect(clock.monotonic() - partitionedAt).toBe(tookMs);

    // A standby that first sees the record now, its wall clock stepped forward an hour, takes over only
    // once the record has not changed for the lease duration on its monotonic clock.
    api.state.down = false;
    const b = elector(api.rest, clock, "b");
    clock.stepWall(7_200_000);
    const seenAt = clock.monotonic();
    let bLeads = false;
    void b.acquire(stop.signal).then((v) => (bLeads = v));
    await run(clock, 14_900, () => bLeads);
    expect(bLeads).toBe(false);
    clock.stepWall(-3_600_000);
    await run(clock, 5_000, () => bLeads);
    expect(bLeads).toBe(true);
    expect(clock.monotonic() - seenAt).toBeGreaterThanOrEqual(15_000);
    expect(api.holder()).toBe("b");
    stop.abort();
  });

  it("wakes from a pause past its renew deadline as a former leader: no renewal is attempted", async () => {
    const clock = new FakeClock();
    const api = leaseApi();
    const fence = new LeaseFence({
      clock,
      holdMs: 10_000,
      log: createLogger({ level: "fatal" }),
      onLapsed: () => undefined,
    });
    const a = elector(api.rest, clock, "a", [], fence);
    const stop = new AbortController();
    await a.acquire(stop.signal);
    let kept: boolean | undefined;
    void a.keepRenewing(stop.signal).then((v) => (kept = v));
    await run(clock, 3_000);
    const writes = api.state.writes;
    // SIGSTOP: 20 s pass and nothing runs; the timers' callbacks run only after the thaw.
    clock.advance(20_000);
    expect(fence.holds()).toBe(false);
    await flush();
    expect(kept).toBe(false);
    expect(api.state.writes).toBe(writes);
    expect(a.isLeader()).toBe(false);
  });

  it("steps down at once when a fenced write finds the hold lapsed", async () => {
    const clock = new FakeClock();
    const api = leaseApi();
    const statuses: boolean[] = [];
    const a = elector(api.rest, clock, "a", statuses);
    const stop = new AbortController();
    await a.acquire(stop.signal);
    let kept: boolean | undefined;
    void a.keepRenewing(stop.signal).then((v) => (kept = v));
    a.stepDown();
    await flush();
    expect(kept).toBe(false);
    expect(statuses).toEqual([true, false]);
  });
});
