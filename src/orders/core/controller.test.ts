// The order controller's word on how soon an order's pass is needed.
import { describe, expect, it } from "vitest";
import { workDue } from "./controller.ts";
import { SWEEP_HELD_MARK } from "./generations.ts";

const order = (status?: Record<string, unknown>) => ({
  metadata: { name: "o" },
  ...(status ? { status } : {}),
});
const at = Date.parse("2030-01-10T02:30:00Z");

describe("workDue", () => {
  it("is true once status.nextRotation has come, at its very second too", () => {
    expect(workDue(order({ nextRotation: "2030-01-10T02:29:59Z" }), at)).toBe(true);
    expect(workDue(order({ nextRotation: "2030-01-10T02:30:00Z" }), at)).toBe(true);
  });

  it("is false before it, without one, and for what is not a time", () => {
    expect(workDue(order({ nextRotation: "2030-01-10T02:30:01Z" }), at)).toBe(false);
    expect(workDue(order({}), at)).toBe(false);
    expect(workDue(order(), at)).toBe(false);
    expect(workDue(order({ nextRotation: 5 }), at)).toBe(false);
    expect(workDue(order({ nextRotation: "soon" }), at)).toBe(false);
  });

  it("is true once a superseded generation's delete time has come, until it is swept", () => {
    const grace = (deleteAt: unknown, previous: unknown = 1): Record<string, unknown> => ({
      nextRotation: "2030-01-10T03:30:00Z",
      previousPasswordGeneration: previous,
      previousPasswordDeleteAt: deleteAt,
    });
    expect(workDue(order(grace("2030-01-10T02:30:00Z")), at)).toBe(true);
    expect(workDue(order(grace("2030-01-10T02:29:00Z")), at)).toBe(true);
    // In its grace period, not yet due; a generation swept (or never superseded) has no deadline.
    expect(workDue(order(grace("2030-01-10T02:30:01Z")), at)).toBe(false);
    expect(
      workDue(order({ ...grace("2030-01-10T02:29:00Z"), previousPasswordGeneration: undefined }), at),
    ).toBe(false);
    expect(workDue(order(grace(undefined)), at)).toBe(false);
    expect(workDue(order(grace("soon")), at)).toBe(false);
  });

  it("is false for a sweep held for the superseded user's last consumer: its checks are routine", () => {
    const held = `user "o-v1" ${SWEEP_HELD_MARK} 2 connections still use it`;
    const status = {
      nextRotation: "2030-01-10T03:30:00Z",
      previousPasswordGeneration: 1,
      previousPasswordDeleteAt: "2030-01-10T02:29:00Z",
    };
    expect(workDue(order({ ...status, conditions: [{ type: "UserReady", message: held }] }), at)).toBe(false);
    expect(workDue(order({ ...status, conditions: [{ type: "UserReady", message: "Ready" }] }), at)).toBe(
      true,
    );
  });
});
