import { describe, expect, it } from "vitest";
import { SPEC, at } from "../../../../harness/fakes/generation-fixtures.ts";
import { switchStatus, untilDeadline } from "./schedule.ts";
import type { RotationStatus } from "./types.ts";

describe("switchStatus", () => {
  it("delivers the first generation without a previous one", () => {
    expect(switchStatus(SPEC, {}, 1, at(30))).toEqual({
      passwordGeneration: 1,
      lastRotation: at(30),
      nextRotation: at(210),
      previousPasswordGeneration: undefined,
      previousPasswordDeleteAt: undefined,
    });
  });

  it("makes the live generation the previous one, its grace period not started before the Secret switched", () => {
    const live: RotationStatus = { passwordGeneration: 1, lastRotation: at(0), nextRotation: at(180) };
    expect(switchStatus(SPEC, live, 2, at(195))).toEqual({
      passwordGeneration: 2,
      lastRotation: at(195),
      // anchored on the switch (195 s), not on the due time (180 s)
      nextRotation: at(375),
      previousPasswordGeneration: 1,
      previousPasswordDeleteAt: undefined,
    });
  });

  it("leaves nextRotation absent with the schedule off, and jumps to a raised generation", () => {
    const live: RotationStatus = { passwordGeneration: 1, lastRotation: at(0) };
    const status = switchStatus({ ...SPEC, intervalMs: 0 }, live, 3, at(20));
    expect(status.nextRotation).toBeUndefined();
    expect(status.passwordGeneration).toBe(3);
    expect(status.previousPasswordGeneration).toBe(1);
  });

  it("stores whole seconds, as the API server does", () => {
    const status = switchStatus(SPEC, { passwordGeneration: 1 }, 2, new Date(at(10).getTime() + 700));
    expect(status.lastRotation).toEqual(at(10));
  });
});

describe("untilDeadline", () => {
  const converged: RotationStatus = { passwordGeneration: 1, lastRotation: at(0), nextRotation: at(180) };
  const grace: RotationStatus = {
    ...converged,
    previousPasswordGeneration: 1,
    previousPasswordDeleteAt: at(60),
  };
  const cases: [string, RotationStatus, number, number | undefined][] = [
    ["no deadline", { passwordGeneration: 1, lastRotation: at(0) }, 0, undefined],
    ["nothing live yet", {}, 0, undefined],
    ["at nextRotation", converged, 100, 80 * 1000],
    ["nextRotation passed: now, never negative", converged, 200, 0],
    ["grace: at previousPasswordDeleteAt, the earlier deadline", grace, 10, 50 * 1000],
    ["grace: deleteAt passed gives 0", grace, 70, 0],
    [
      "grace: a nextRotation before deleteAt cannot act, deleteAt counts",
      { ...grace, nextRotation: at(30) },
      10,
      50 * 1000,
    ],
  ];
  it.each(cases)("%s", (_name, status, now, expected) => {
    expect(untilDeadline(status, at(now))).toBe(expected);
  });
});
