import { describe, expect, it } from "vitest";
import type { Clock } from "../../runtime/base/clock.ts";
import { NamespaceRotations, rotationWait } from "./rotation-rate.ts";

const rate = { limit: 2, windowMs: 60_000 };

describe("the rotations a namespace may start", () => {
  it("lets the limit through in a window, then says how long the next waits", () => {
    const starts = [
      { key: "a/2", at: 1_000 },
      { key: "b/2", at: 5_000 },
    ];
    expect(rotationWait(starts.slice(0, 1), "b/2", 5_000, rate)).toBe(0);
    expect(rotationWait(starts, "a/3", 10_000, rate)).toBe(51_000);
    expect(rotationWait(starts, "a/3", 61_000, rate)).toBe(0);
  });

  it("never holds back a rotation it already counted", () => {
    expect(
      rotationWait(
        [
          { key: "a/2", at: 0 },
          { key: "b/2", at: 0 },
        ],
        "a/2",
        10,
        rate,
      ),
    ).toBe(0);
  });

  it("is off with a limit of 0", () => {
    expect(rotationWait([{ key: "a/2", at: 0 }], "a/3", 1, { limit: 0, windowMs: 1 })).toBe(0);
  });

  it("counts per namespace, on the monotonic clock", () => {
    let now = 0;
    const clock: Clock = { now: () => 0, monotonic: () => now, setTimer: () => ({ cancel() {} }) };
    const rotations = new NamespaceRotations(rate, clock);
    expect(rotations.take("/t1", "a/2")).toBe(0);
    expect(rotations.take("/t1", "b/2")).toBe(0);
    expect(rotations.take("/t2", "c/2")).toBe(0);
    now = 30_000;
    expect(rotations.take("/t1", "a/3")).toBe(30_000);
    expect(rotations.take("/t1", "a/2")).toBe(0);
    now = 60_001;
    expect(rotations.take("/t1", "a/3")).toBe(0);
  });

  it("remembers when an order's rotation was first held, until it is released", () => {
    const rotations = new NamespaceRotations(rate, { monotonic: () => 0 });
    expect(rotations.heldSince("/t1", "a")).toBeUndefined();
    rotations.hold("/t1", "a", 1_000);
    rotations.hold("/t1", "a", 5_000);
    expect(rotations.heldSince("/t1", "a")).toBe(1_000);
    expect(rotations.heldSince("/t2", "a")).toBeUndefined();
    rotations.release("/t1", "a");
    expect(rotations.heldSince("/t1", "a")).toBeUndefined();
  });
});
