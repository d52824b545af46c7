import { describe, expect, it } from "vitest";
import { MINUTE, at, gen } from "../../../../harness/fakes/generation-fixtures.ts";
import { chooseTarget, declaredGeneration, lostPieces, nextRotationOf } from "./target.ts";
import type { GenerationChildren, RotationSpec, RotationStatus, TargetDecision } from "./types.ts";
import type { RotationWindow } from "./window.ts";

const spec = (over: Partial<RotationSpec> = {}): RotationSpec => ({
  declaredGeneration: 1,
  intervalMs: 3 * MINUTE,
  gracePeriodMs: MINUTE,
  ...over,
});
// Generation 1 went live at T0; the schedule is due at T0+3m.
const live1: RotationStatus = { passwordGeneration: 1, lastRotation: at(0), nextRotation: at(180) };
const inGrace: RotationStatus = {
  passwordGeneration: 2,
  lastRotation: at(180),
  previousPasswordGeneration: 1,
  previousPasswordDeleteAt: at(240),
};

interface Case {
  name: string;
  spec?: Partial<RotationSpec>;
  status: RotationStatus;
  children: GenerationChildren[];
  now: number;
  expected: TargetDecision;
}

const cases: Case[] = [
  {
    name: "nothing live: the declared generation",
    status: {},
    children: [],
    now: 0,
    expected: { kind: "first", generation: 1 },
  },
  {
    name: "nothing live, declared 3",
    spec: { declaredGeneration: 3 },
    status: {},
    children: [],
    now: 0,
    expected: { kind: "first", generation: 3 },
  },
  {
    name: "nothing live, declared 0 reads as 1",
    spec: { declaredGeneration: 0 },
    status: { passwordGeneration: 0 },
    children: [],
    now: 0,
    expected: { kind: "first", generation: 1 },
  },
  {
    name: "nothing live, a refused first generation is still the target",
    status: {},
    children: [gen(1, "present", "refused:no")],
    now: 0,
    expected: { kind: "first", generation: 1 },
  },
  {
    name: "live and whole, schedule not due",
    status: live1,
    children: [gen(1)],
    now: 179,
    expected: { kind: "none" },
  },
  {
    name: "schedule due exactly at lastRotation + interval",
    status: live1,
    children: [gen(1)],
    now: 180,
    expected: { kind: "rotate", generation: 2, causes: ["schedule"] },
  },
  {
    name: "due is computed from lastRotation, not a stale nextRotation",
    status: { ...live1, nextRotation: at(9999) },
    children: [gen(1)],
    now: 180,
    expected: { kind: "rotate", generation: 2, causes: ["schedule"] },
  },
  {
    name: "schedule off (interval 0)",
    spec: { intervalMs: 0 },
    status: live1,
    children: [gen(1)],
    now: 100_000,
    expected: { kind: "none" },
  },
  {
    name: "declared above live: straight to the declared generation",
    spec: { declaredGeneration: 3 },
    status: live1,
    children: [gen(1)],
    now: 10,
    expected: { kind: "rotate", generation: 3, causes: ["declared"] },
  },
  {
    name: "declared equal to live is no raise",
    spec: { declaredGeneration: 1 },
    status: live1,
    children: [gen(1)],
    now: 10,
    expected: { kind: "none" },
  },
  {
    name: "lost password (Secret gone)",
    status: live1,
    children: [gen(1, "absent")],
    now: 10,
    expected: { kind: "rotate", generation: 2, causes: ["lostPassword"] },
  },
  {
    name: "lost password (empty)",
    status: live1,
    children: [gen(1, "empty")],
    now: 10,
    expected: { kind: "rotate", generation: 2, causes: ["lostPassword"] },
  },
  {
    name: "lost User",
    status: live1,
    children: [gen(1, "present", "absent")],
    now: 10,
    expected: { kind: "rotate", generation: 2, causes: ["lostAccount"] },
  },
  {
    name: "User being deleted counts as lost",
    status: live1,
    children: [gen(1, "present", "deleting")],
    now: 10,
    expected: { kind: "rotate", generation: 2, causes: ["lostAccount"] },
  },
  {
    name: "lost Permission",
    status: live1,
    children: [gen(1, "present", "ready", "absent")],
    now: 10,
    expected: { kind: "rotate", generation: 2, causes: ["lostAccess"] },
  },
  {
    name: "live generation not listed at all",
    status: live1,
    children: [],
    now: 10,
    expected: { kind: "rotate", generation: 2, causes: ["lostPassword", "lostAccount", "lostAccess"] },
  },
  {
    name: "a pending live User is not lost",
    status: live1,
    children: [gen(1, "present", "pending", "pending")],
    now: 10,
    expected: { kind: "none" },
  },
  {
    name: "several causes at once",
    spec: { declaredGeneration: 4 },
    status: live1,
    children: [gen(1, "present", "absent")],
    now: 200,
    expected: { kind: "rotate", generation: 4, causes: ["declared", "schedule", "lostAccount"] },
  },
  {
    name: "a successor in flight is continued",
    status: live1,
    children: [gen(1), gen(2, "present", "pending", "absent")],
    now: 10,
    expected: { kind: "continue", generation: 2 },
  },
  {
    name: "the highest successor in flight wins",
    status: live1,
    children: [gen(1), gen(2, "present", "pending"), gen(4, "present", "pending")],
    now: 10,
    expected: { kind: "continue", generation: 4 },
  },
  {
    name: "a successor without a User is not in flight",
    status: live1,
    children: [gen(1), gen(2, "present", "absent", "absent")],
    now: 10,
    expected: { kind: "none" },
  },
  {
    name: "a successor being deleted is not in flight",
    status: live1,
    children: [gen(1), gen(2, "present", "deleting")],
    now: 10,
    expected: { kind: "none" },
  },
  {
    name: "a refused successor is continued while declared does not exceed it",
    spec: { declaredGeneration: 2 },
    status: live1,
    children: [gen(1), gen(2, "present", "refused:no")],
    now: 10,
    expected: { kind: "continue", generation: 2 },
  },
  {
    name: "a raise above a refused successor replaces it",
    spec: { declaredGeneration: 3 },
    status: live1,
    children: [gen(1), gen(2, "present", "refused:no")],
    now: 10,
    expected: { kind: "rotate", generation: 3, causes: ["declared"] },
  },
  {
    name: "a pending successor is continued even below a raise",
    spec: { declaredGeneration: 5 },
    status: live1,
    children: [gen(1), gen(2, "present", "pending")],
    now: 10,
    expected: { kind: "continue", generation: 2 },
  },
  {
    name: "generations below live are never continued",
    status: { ...live1, passwordGeneration: 3 },
    children: [gen(2, "present", "pending"), gen(3)],
    now: 10,
    expected: { kind: "none" },
  },
  {
    name: "grace period: a due schedule is held",
    status: inGrace,
    children: [gen(1), gen(2)],
    now: 400,
    expected: { kind: "held", causes: ["schedule"] },
  },
  {
    name: "grace period: a raise is held",
    spec: { declaredGeneration: 3 },
    status: inGrace,
    children: [gen(1), gen(2)],
    now: 200,
    expected: { kind: "held", causes: ["declared"] },
  },
  {
    name: "grace period: a lost piece is held",
    status: inGrace,
    children: [gen(1), gen(2, "present", "absent")],
    now: 200,
    expected: { kind: "held", causes: ["lostAccount"] },
  },
  {
    name: "grace period with nothing wanted",
    status: inGrace,
    children: [gen(1), gen(2)],
    now: 200,
    expected: { kind: "none" },
  },
  {
    name: "grace period: a successor in flight is still continued",
    status: inGrace,
    children: [gen(1), gen(2), gen(3, "present", "pending")],
    now: 200,
    expected: { kind: "continue", generation: 3 },
  },
  {
    name: "live without lastRotation: the schedule is not due",
    status: { passwordGeneration: 1 },
    children: [gen(1)],
    now: 100_000,
    expected: { kind: "none" },
  },
];

describe("chooseTarget", () => {
  it.each(cases)("$name", (c) => {
    expect(chooseTarget(spec(c.spec), c.status, c.children, at(c.now))).toEqual(c.expected);
  });
});

describe("helpers", () => {
  it("resolves the declared generation to at least 1", () => {
    expect(declaredGeneration(spec({ declaredGeneration: 0 }))).toBe(1);
    expect(declaredGeneration(spec({ declaredGeneration: 7 }))).toBe(7);
  });
  it("lists no lost piece for a whole generation", () => {
    expect(lostPieces(gen(1))).toEqual([]);
  });
});

// T0 is 2030-01-01T00:00Z: generation 1's rotation is due at 00:03, the window opens at 01:00 for an hour.
describe("with a rotation window", () => {
  const window: RotationWindow = { schedule: "0 1 * * *", timeZone: "UTC", durationMs: 60 * MINUTE };
  const windowed = (over: Partial<RotationSpec> = {}) => spec({ window, seed: "uid-1", ...over });
  const moment = nextRotationOf(windowed(), at(0)) as Date;
  const seconds = (d: Date) => (d.getTime() - at(0).getTime()) / 1000;

  it("puts the schedule's next rotation inside the window, apart per order", () => {
    expect(seconds(moment)).toBeGreaterThanOrEqual(3600);
    expect(seconds(moment)).toBeLessThan(7200);
    expect(nextRotationOf(windowed({ seed: "uid-2" }), at(0))).not.toEqual(moment);
    expect(nextRotationOf(windowed({ window: undefined }), at(0))).toEqual(at(180));
    expect(nextRotationOf(windowed({ intervalMs: 0 }), at(0))).toBeUndefined();
  });

  it("keeps a due scheduled rotation until its moment, then rotates", () => {
    const before = new Date(moment.getTime() - 1000);
    expect(chooseTarget(windowed(), live1, [gen(1)], at(200))).toEqual({ kind: "none" });
    expect(chooseTarget(windowed(), live1, [gen(1)], before)).toEqual({ kind: "none" });
    expect(chooseTarget(windowed(), live1, [gen(1)], moment)).toEqual({
      kind: "rotate",
      generation: 2,
      causes: ["schedule"],
    });
  });

  it("does not hold a raise, a lost piece or a move", () => {
    expect(chooseTarget(windowed({ declaredGeneration: 5 }), live1, [gen(1)], at(200))).toEqual({
      kind: "rotate",
      generation: 5,
      causes: ["declared"],
    });
    expect(chooseTarget(windowed(), live1, [gen(1, "absent")], at(200))).toEqual({
      kind: "rotate",
      generation: 2,
      causes: ["lostPassword"],
    });
    const elsewhere = { ...gen(1), backend: "old" };
    expect(chooseTarget(windowed(), live1, [elsewhere], at(200), "new")).toEqual({
      kind: "rotate",
      generation: 2,
      causes: ["moved"],
    });
  });

  it("does not rotate after the window closed unused: the moment moves to the next day's window", () => {
    expect(chooseTarget(windowed(), live1, [gen(1)], at(7200))).toEqual({ kind: "none" });
    const next = nextRotationOf(windowed(), at(0), at(7200)) as Date;
    expect(seconds(next)).toBeGreaterThanOrEqual(86_400 + 3600);
    expect(seconds(next)).toBeLessThan(86_400 + 7200);
    expect(chooseTarget(windowed(), live1, [gen(1)], next)).toMatchObject({ kind: "rotate" });
  });

  it("rotates when the pass was queued at its moment inside the window and handed out after it closed", () => {
    const closed = at(7200 + 40);
    expect(chooseTarget(windowed(), live1, [gen(1)], closed, undefined, moment)).toEqual({
      kind: "rotate",
      generation: 2,
      causes: ["schedule"],
    });
    // Queued after the window closed: missed, as with no queue.
    expect(chooseTarget(windowed(), live1, [gen(1)], closed, undefined, at(7200))).toEqual({ kind: "none" });
  });
});
