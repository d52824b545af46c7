import { describe, expect, it } from "vitest";
import { pruneActions, sweepPrevious, wholeSeconds } from "./cleanup.ts";
import { at, gen } from "../../../../harness/fakes/generation-fixtures.ts";
import type { ChildAction, ChildKind, GenerationChildren, RotationStatus } from "./types.ts";

// A generation's removal waits for its User alone: the Permission's and the password Secret's are quiet.
const del = (kind: ChildKind, generation: number): ChildAction =>
  kind === "account" ? { op: "delete", kind, generation } : { op: "delete", kind, generation, quiet: true };

describe("pruneActions", () => {
  const cases: [string, GenerationChildren[], number[], ChildAction[]][] = [
    ["nothing outside keep", [gen(1), gen(2)], [1, 2], []],
    [
      "a whole stray: Permission and User first",
      [gen(1), gen(5)],
      [1],
      [del("access", 5), del("account", 5)],
    ],
    [
      "a stray whose User is gone: its password Secret",
      [gen(1), gen(5, "present", "absent", "absent")],
      [1],
      [del("passwordSecret", 5)],
    ],
    [
      "a stray whose User is still being deleted keeps its Secret",
      [gen(5, "present", "deleting", "deleting")],
      [1],
      [],
    ],
    [
      "a stray with an empty Secret only",
      [gen(5, "empty", "absent", "absent")],
      [1],
      [del("passwordSecret", 5)],
    ],
    [
      "a stray Permission without User or Secret",
      [gen(5, "absent", "absent", "pending")],
      [1],
      [del("access", 5)],
    ],
    [
      "refused strays go too, lowest first",
      [gen(4, "present", "refused:x", "absent"), gen(1), gen(2, "present", "ready", "refused:y")],
      [1],
      [del("access", 2), del("account", 2), del("account", 4)],
    ],
  ];
  it.each(cases)("%s", (_name, children, keep, expected) => {
    expect(pruneActions(children, new Set(keep))).toEqual(expected);
  });
});

describe("sweepPrevious", () => {
  const grace: RotationStatus = {
    passwordGeneration: 2,
    lastRotation: at(180),
    nextRotation: at(360),
    previousPasswordGeneration: 1,
    previousPasswordDeleteAt: at(240),
  };
  const cleared: RotationStatus = {
    ...grace,
    previousPasswordGeneration: undefined,
    previousPasswordDeleteAt: undefined,
  };

  const cases: [string, RotationStatus, GenerationChildren[], number, ChildAction[], RotationStatus][] = [
    [
      "no previous generation",
      { passwordGeneration: 1, lastRotation: at(0) },
      [gen(1)],
      500,
      [],
      { passwordGeneration: 1, lastRotation: at(0) },
    ],
    ["before deleteAt: nothing", grace, [gen(1), gen(2)], 239, [], grace],
    [
      "pass 1 at deleteAt: Permission and User",
      grace,
      [gen(1), gen(2)],
      240,
      [del("access", 1), del("account", 1)],
      grace,
    ],
    [
      "User still being deleted: wait",
      grace,
      [gen(1, "present", "deleting", "absent"), gen(2)],
      250,
      [],
      grace,
    ],
    [
      "pass 2, User gone: the Secret, and the fields cleared",
      grace,
      [gen(1, "present", "absent", "absent"), gen(2)],
      260,
      [del("passwordSecret", 1)],
      cleared,
    ],
    [
      "pass 2 with a Permission left over: deleted as well",
      grace,
      [gen(1, "present", "absent", "pending"), gen(2)],
      260,
      [del("access", 1), del("passwordSecret", 1)],
      cleared,
    ],
    ["nothing left of the previous generation: just cleared", grace, [gen(2)], 260, [], cleared],
    [
      "previous equal to live (inconsistent): cleared, nothing deleted",
      { ...grace, previousPasswordGeneration: 2 },
      [gen(2)],
      260,
      [],
      cleared,
    ],
    [
      "previous without deleteAt: waits for the delivered Secret to switch",
      { ...grace, previousPasswordDeleteAt: undefined },
      [gen(1), gen(2)],
      300.5,
      [],
      { ...grace, previousPasswordDeleteAt: undefined },
    ],
    [
      // The delivered Secret may still carry generation 1: a lost piece of generation 2 starts no grace.
      "previous without deleteAt, the live password lost: still waits for the delivered Secret",
      { ...grace, previousPasswordDeleteAt: undefined },
      [gen(1), { ...gen(2), password: "absent" }],
      300.5,
      [],
      { ...grace, previousPasswordDeleteAt: undefined },
    ],
  ];
  it.each(cases)("%s", (_name, status, children, now, actions, expected) => {
    expect(sweepPrevious(status, children, at(now))).toEqual({ actions, status: expected });
  });

  it("takes two passes from deleteAt to cleared fields", () => {
    const first = sweepPrevious(grace, [gen(1), gen(2)], at(240));
    expect(first.status.previousPasswordGeneration).toBe(1);
    const second = sweepPrevious(first.status, [gen(1, "present", "absent", "absent"), gen(2)], at(241));
    expect(second.status.previousPasswordGeneration).toBeUndefined();
    expect(second.actions).toEqual([del("passwordSecret", 1)]);
  });
});

describe("wholeSeconds", () => {
  it("drops the milliseconds", () => {
    expect(wholeSeconds(at(1).getTime() + 999)).toEqual(at(1));
  });
});
