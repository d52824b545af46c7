// The generation plan decided from evidence (the delivered Secret), and the sweep that waits for the
// last consumer. Each case below failed on the plan that trusted the status alone.
import { describe, expect, it } from "vitest";
import { MINUTE, at, gen, input, userName } from "../../../../harness/fakes/generation-fixtures.ts";
import {
  decideSwitch,
  planGenerations,
  supersededToAsk,
  type RotationStatus,
  type SweepHold,
} from "../generations.ts";

const carries = (generation: number) => ({ kind: "carries", generation }) as const;
const deletes = (plan: { actions: readonly { op: string; generation: number }[] }) =>
  plan.actions.filter((a) => a.op === "delete").map((a) => a.generation);

describe("a lost status", () => {
  // Scheduled rotations brought generation 3; then the status was wiped.
  const children = [gen(2), gen(3)];

  it("keeps the generation the delivered Secret carries live, and gives the one before a grace period", () => {
    const plan = planGenerations(input({ status: {}, children, delivered: carries(3) }), at(100));
    expect(plan.target.kind).toBe("none");
    expect(deletes(plan)).toEqual([]);
    expect(plan.status).toMatchObject({
      passwordGeneration: 3,
      lastRotation: at(100),
      nextRotation: at(100 + 180),
      previousPasswordGeneration: 2,
      previousPasswordDeleteAt: at(100 + 60),
    });
    expect(plan.view.status).toBe("True");
  });

  it("never goes back to the declared generation when nothing at all is known", () => {
    const plan = planGenerations(input({ status: {}, children, delivered: { kind: "none" } }), at(100));
    expect(plan.target).toEqual({ kind: "first", generation: 3 });
    expect(plan.switchable).toBe(3);
  });

  it("deletes nothing when the delivered Secret names a generation it cannot vouch for", () => {
    // A tenant edited the username to a later generation's during generation 1's grace period.
    const status: RotationStatus = {
      passwordGeneration: 3,
      lastRotation: at(0),
      previousPasswordGeneration: 2,
      previousPasswordDeleteAt: at(5),
    };
    const plan = planGenerations(
      input({ status, children: [gen(1), ...children], delivered: { kind: "unvouched" } }),
      at(10),
    );
    expect(deletes(plan)).toEqual([]);
    expect(plan.status.passwordGeneration).toBe(3);
  });

  it("deletes nothing but the target's pieces when the delivered Secret cannot be read", () => {
    const status: RotationStatus = { passwordGeneration: 3, lastRotation: at(0) };
    const plan = planGenerations(
      input({ status, children: [gen(1), ...children], delivered: { kind: "unknown" } }),
      at(10),
    );
    expect(deletes(plan)).toEqual([]);
  });

  it("takes a status that names an undelivered successor back to the delivered generation", () => {
    // Written by an earlier version: switched in the status while the Secret still carries generation 2.
    const status: RotationStatus = {
      passwordGeneration: 3,
      lastRotation: at(0),
      previousPasswordGeneration: 2,
    };
    const plan = planGenerations(input({ status, children, delivered: carries(2) }), at(10));
    expect(plan.status).toMatchObject({ passwordGeneration: 2, previousPasswordGeneration: undefined });
    expect(plan.target).toEqual({ kind: "continue", generation: 3 });
    expect(deletes(plan)).toEqual([]);
    expect(plan.switchable).toBe(3);
  });
});

describe("a stalled delivery", () => {
  const live: RotationStatus = { passwordGeneration: 1, lastRotation: at(0), nextRotation: at(180) };

  it("keeps the status on the delivered user until the Secret carries the successor", () => {
    const i = input({ status: live, children: [gen(1), gen(2)], delivered: carries(1) });
    const plan = planGenerations(i, at(190));
    const decision = decideSwitch(i, plan, { accepted: true }, at(190));
    expect(decision.status).toEqual({ ...live, nextRotation: at(180) });
    expect(decision.status.previousPasswordGeneration).toBeUndefined();
    expect(decision.switchTo?.generation).toBe(2);
    expect(decision.view.message).toContain(`takes over once the delivered Secret carries it`);
  });

  it("never starts the delivered user's grace when a piece of the successor is lost", () => {
    // The successor's User was deleted while its delivery stalled.
    const i = input({
      status: live,
      children: [gen(1), gen(2, "present", "absent", "ready")],
      delivered: carries(1),
    });
    for (const now of [190, 400, 10_000]) {
      const plan = planGenerations(i, at(now));
      expect(deletes(plan).filter((g) => g === 1)).toEqual([]);
      expect(plan.status.passwordGeneration).toBe(1);
      expect(plan.status.previousPasswordDeleteAt).toBeUndefined();
      expect(plan.target).toMatchObject({ kind: "rotate", generation: 2 });
    }
  });
});

describe("the sweep waits for the last consumer", () => {
  const grace: RotationStatus = {
    passwordGeneration: 2,
    lastRotation: at(180),
    nextRotation: at(360),
    previousPasswordGeneration: 1,
    previousPasswordDeleteAt: at(240),
  };
  const hold = (count: number): SweepHold => ({ holdMs: 10 * MINUTE, consumers: { known: true, count } });
  const at2 = (sweepHold: SweepHold, now: number) =>
    planGenerations(
      input({ status: grace, children: [gen(1), gen(2)], delivered: carries(2), sweepHold }),
      at(now),
    );

  it("asks about the superseded user only once its grace period is over", () => {
    const i = input({ status: grace, children: [gen(1), gen(2)], delivered: carries(2) });
    expect(supersededToAsk(i, at(239))).toBeUndefined();
    expect(supersededToAsk(i, at(240))).toBe(1);
    // A User whose finalizer was stripped leaves its broker user, removed as a stray: asked about too.
    expect(supersededToAsk(input({ ...i, children: [gen(1, "present", "absent"), gen(2)] }), at(240))).toBe(
      1,
    );
  });

  it("holds a superseded user whose User child is gone while connections use it", () => {
    const plan = planGenerations(
      input({
        status: grace,
        children: [gen(1, "present", "absent"), gen(2)],
        delivered: carries(2),
        sweepHold: hold(1),
      }),
      at(250),
    );
    expect(deletes(plan)).toEqual([]);
    expect(plan.swept).toBeUndefined();
    expect(plan.held?.generation).toBe(1);
  });

  it("holds while connections use it, and says so", () => {
    const plan = at2(hold(2), 250);
    expect(deletes(plan)).toEqual([]);
    expect(plan.held).toEqual({ generation: 1, consumers: { known: true, count: 2 }, until: at(840) });
    expect(plan.view.status).toBe("True");
    expect(plan.view.message).toContain(
      `the superseded user "${userName(1)}" is kept past its grace period while 2 connections still use it, until 2030-01-01T00:14:00Z at the latest`,
    );
  });

  it("holds when the backend cannot tell", () => {
    const plan = at2({ holdMs: 10 * MINUTE, consumers: { known: false, reason: "HTTP 503" } }, 250);
    expect(deletes(plan)).toEqual([]);
    expect(plan.view.message).toContain("the broker cannot tell who uses it (HTTP 503)");
  });

  it("sweeps once nobody uses it", () => {
    const plan = at2(hold(0), 250);
    expect(plan.held).toBeUndefined();
    expect(deletes(plan)).toEqual([1, 1]);
  });

  it("sweeps at the end of the hold whoever still uses it", () => {
    const plan = at2(hold(3), 840);
    expect(plan.held).toBeUndefined();
    expect(deletes(plan)).toEqual([1, 1]);
  });
});
