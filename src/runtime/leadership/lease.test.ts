import { describe, expect, it } from "vitest";
import { decideLease, lapsed, observe, releasedLease, type LeaseSpec } from "./lease.ts";
import { microTime } from "../base/micro-time.ts";

/** The wall clock, for the stamps; expiry reads the monotonic clock, whose origin is unrelated. */
const now = Date.parse("2026-03-01T10:00:00.123Z");
const mono = 7_000_000;
const duration = 15_000;

describe("decideLease", () => {
  it("creates the Lease when there is none, with MicroTime stamps", () => {
    const d = decideLease({
      current: undefined,
      observation: observe(undefined, undefined, mono),
      identity: "a",
      leaseDurationMs: duration,
      now,
      monotonicNow: mono,
    });
    expect(d).toEqual({
      action: "create",
      spec: {
        holderIdentity: "a",
        leaseDurationSeconds: 15,
        acquireTime: "2026-03-01T10:00:00.123000Z",
        renewTime: "2026-03-01T10:00:00.123000Z",
        leaseTransitions: 0,
      },
    });
  });

  it("waits while another holder's record changed within the lease duration, judged by local time", () => {
    // The holder's clock is an hour behind: its renewTime says nothing to us.
    const other: LeaseSpec = {
      holderIdentity: "b",
      leaseDurationSeconds: 15,
      renewTime: microTime(now - 3_600_000),
      leaseTransitions: 2,
    };
    const seen = observe(undefined, other, mono);
    const decide = (wall: number, monotonic: number) =>
      decideLease({
        current: other,
        observation: seen,
        identity: "a",
        leaseDurationMs: duration,
        now: wall,
        monotonicNow: monotonic,
      });
    expect(decide(now + 14_999, mono + 14_999)).toEqual({ action: "wait", holder: "b" });
    expect(decide(now + 15_000, mono + 15_000)).toMatchObject({
      action: "update",
      spec: { holderIdentity: "a", leaseTransitions: 3 },
    });
  });

  it("judges expiry by the monotonic clock alone: a wall clock stepped either way changes nothing", () => {
    const other: LeaseSpec = { holderIdentity: "b", renewTime: microTime(now), leaseTransitions: 0 };
    const seen = observe(undefined, other, mono);
    const decide = (wall: number, monotonic: number) =>
      decideLease({
        current: other,
        observation: seen,
        identity: "a",
        leaseDurationMs: duration,
        now: wall,
        monotonicNow: monotonic,
      }).action;
    // An hour forward on the wall after a second: still b's.
    expect(decide(now + 3_600_000, mono + 1_000)).toBe("wait");
    // An hour back, but the lease duration has passed here: taken, stamped with the wall clock as it is.
    const taken = decideLease({
      current: other,
      observation: seen,
      identity: "a",
      leaseDurationMs: duration,
      now: now - 3_600_000,
      monotonicNow: mono + duration,
    });
    expect(taken).toMatchObject({ action: "update", spec: { renewTime: microTime(now - 3_600_000) } });
  });

  it("restarts the wait whenever the holder renews", () => {
    const first: LeaseSpec = { holderIdentity: "b", renewTime: microTime(now), leaseTransitions: 0 };
    const second: LeaseSpec = { ...first, renewTime: microTime(now + 2000) };
    const o1 = observe(undefined, first, mono);
    expect(observe(o1, first, mono + 10_000)).toBe(o1);
    const o2 = observe(o1, second, mono + 10_000);
    expect(
      decideLease({
        current: second,
        observation: o2,
        identity: "a",
        leaseDurationMs: duration,
        now: now + 20_000,
        monotonicNow: mono + 20_000,
      }).action,
    ).toBe("wait");
  });

  it("renews its own Lease keeping acquireTime and transitions", () => {
    const mine: LeaseSpec = {
      holderIdentity: "a",
      acquireTime: "2026-03-01T09:00:00.000000Z",
      renewTime: microTime(now - 2000),
      leaseTransitions: 4,
    };
    const d = decideLease({
      current: mine,
      observation: observe(undefined, mine, mono),
      identity: "a",
      leaseDurationMs: duration,
      now,
      monotonicNow: mono,
    });
    expect(d).toMatchObject({
      action: "update",
      spec: {
        holderIdentity: "a",
        acquireTime: "2026-03-01T09:00:00.000000Z",
        renewTime: microTime(now),
        leaseTransitions: 4,
      },
    });
  });

  it("takes a released Lease at once", () => {
    const released = releasedLease({ holderIdentity: "b", leaseTransitions: 1 }, now);
    expect(released.holderIdentity).toBe("");
    const d = decideLease({
      current: released,
      observation: observe(undefined, released, mono),
      identity: "a",
      leaseDurationMs: duration,
      now,
      monotonicNow: mono,
    });
    expect(d).toMatchObject({ action: "update", spec: { holderIdentity: "a", leaseTransitions: 2 } });
  });
});

describe("lapsed", () => {
  it("is over once the period has passed, not before", () => {
    expect(lapsed(mono, 10_000, mono + 9_999)).toBe(false);
    expect(lapsed(mono, 10_000, mono + 10_000)).toBe(true);
  });
});

describe("microTime", () => {
  it("writes six fractional digits", () => {
    expect(microTime(Date.parse("2026-01-02T03:04:05Z"))).toBe("2026-01-02T03:04:05.000000Z");
  });
});
