// A password a validation policy refused (seed 002's User reads PasswordRefused) is answered by a new
// generation with a new password once NEW_PASSWORD_AFTER_MS has passed, never by the same one again.
import { describe, expect, it } from "vitest";
import { at, gen, input, MINUTE } from "../../../../harness/fakes/generation-fixtures.ts";
import { planGenerations } from "../generations.ts";
import { childStateOf, NEW_PASSWORD_AFTER_MS, type ChildReadiness } from "./children.ts";
import { chooseTarget } from "./target.ts";
import type { GenerationChildren } from "./types.ts";

const readiness: ChildReadiness = {
  refusedReason: "ReconcileError",
  newPasswordReasons: ["PasswordRefused"],
  observedGeneration: (_object, ready) => ready.observedGeneration,
};
const policy =
  "the server's password validation (simple_password_check; strict_password_validation ON) refused it";

/** Generation n's account refused by the policy at `seconds`. */
function refusedAt(n: number, seconds: number, access = "absent"): GenerationChildren {
  return {
    ...gen(n, "present", "ready", access),
    account: {
      phase: "refused",
      message: policy,
      newPasswordAt: new Date(at(seconds).getTime() + NEW_PASSWORD_AFTER_MS),
    },
  };
}

describe("a password the server's policy refused", () => {
  it("is read from the User's condition, with the moment a new one is due", () => {
    const condition = {
      type: "Ready",
      status: "False",
      reason: "PasswordRefused",
      message: policy,
      observedGeneration: 1,
      lastTransitionTime: at(10).toISOString(),
    };
    const object = (c: typeof condition) => ({ metadata: { generation: 1 }, status: { conditions: [c] } });
    expect(childStateOf(object(condition), readiness)).toEqual({
      phase: "refused",
      message: policy,
      newPasswordAt: at(70),
    });
    // Any other refusal waits for a person, as before.
    expect(childStateOf(object({ ...condition, reason: "ReconcileError" }), readiness)).toEqual({
      phase: "refused",
      message: policy,
    });
  });

  it("stays the target until the new password is due, then a new generation is minted above it", () => {
    const spec = { declaredGeneration: 1, intervalMs: 3 * MINUTE, gracePeriodMs: MINUTE };
    const children = [refusedAt(1, 0)];
    expect(chooseTarget(spec, {}, children, at(59))).toEqual({ kind: "first", generation: 1 });
    expect(chooseTarget(spec, {}, children, at(60))).toEqual({ kind: "first", generation: 2 });
    // Again refused: the next one goes above both.
    expect(chooseTarget(spec, {}, [refusedAt(1, 0), refusedAt(2, 60)], at(120))).toEqual({
      kind: "first",
      generation: 3,
    });
  });

  it("in a rotation, replaces the successor and keeps the delivered generation", () => {
    const spec = { declaredGeneration: 2, intervalMs: 0, gracePeriodMs: MINUTE };
    const live = { passwordGeneration: 1, lastRotation: at(0) };
    const children = [gen(1, "present", "ready", "ready"), refusedAt(2, 10)];
    expect(chooseTarget(spec, live, children, at(30))).toEqual({ kind: "continue", generation: 2 });
    expect(chooseTarget(spec, live, children, at(70))).toEqual({
      kind: "rotate",
      generation: 3,
      causes: ["declared"],
    });
  });

  it("says when the new password follows, wakes then, and keeps the spent generation while the next is minted", () => {
    const waiting = planGenerations(input({ children: [refusedAt(1, 0)] }), at(30));
    expect(waiting.newPasswordAt).toEqual(at(60));
    expect(waiting.view.message).toContain(
      `a new user with a new password follows from ${at(60).toISOString()}`,
    );

    const replaced = planGenerations(input({ children: [refusedAt(1, 0)] }), at(60));
    expect(replaced.target).toEqual({ kind: "first", generation: 2 });
    expect(replaced.newPasswordAt).toBeUndefined();
    // Generation 2 is minted beside it at once: the spent one is what keeps the target above it.
    expect(replaced.actions).not.toContainEqual(expect.objectContaining({ op: "delete" }));
    expect(replaced.actions).toContainEqual({ op: "create", kind: "account", generation: 2 });
  });

  it("prunes the spent generations below the newest spent one, which never come back as the target", () => {
    const deleting: GenerationChildren = { ...gen(1, "present", "deleting", "absent") };
    const children = [deleting, refusedAt(2, 60)];
    const plan = planGenerations(input({ children }), at(130));
    expect(plan.target).toEqual({ kind: "first", generation: 3 });
    // Generation 2 was spent and is kept; generation 1 is on its way out and is not the target again.
    expect(plan.actions).not.toContainEqual(expect.objectContaining({ op: "delete", generation: 2 }));

    const spec = { declaredGeneration: 2, intervalMs: 0, gracePeriodMs: MINUTE };
    const live = { passwordGeneration: 1, lastRotation: at(0) };
    const rotation = [
      gen(1, "present", "ready", "ready"),
      { ...gen(2, "present", "deleting", "absent") },
      refusedAt(3, 0),
    ];
    expect(chooseTarget(spec, live, rotation, at(70))).toEqual({
      kind: "rotate",
      generation: 4,
      causes: ["declared"],
    });
  });
});
