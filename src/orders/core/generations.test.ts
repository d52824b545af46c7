import { describe, expect, it } from "vitest";
import {
  decideSwitch,
  planGenerations,
  type ChildAction,
  type ChildKind,
  type RotationStatus,
} from "./generations.ts";
import { MINUTE, VHOST, at, gen, input, userName } from "../../../harness/fakes/generation-fixtures.ts";

const create = (kind: ChildKind, generation: number): ChildAction => ({ op: "create", kind, generation });
// A generation's removal waits for its User alone: the Permission's and the password Secret's are quiet.
const del = (kind: ChildKind, generation: number): ChildAction =>
  kind === "account" ? { op: "delete", kind, generation } : { op: "delete", kind, generation, quiet: true };
const accepted = { accepted: true } as const;
const u = (n: number) => `"${userName(n)}"`;
const provisioned = (n: number) => `vhost "${VHOST}" and user ${u(n)} exist on the broker`;

// Generation 1 live since T0, interval 3m, grace 1m.
const live1: RotationStatus = { passwordGeneration: 1, lastRotation: at(0), nextRotation: at(180) };
// Generation 2 switched to at 3m; generation 1 in its grace period until 4m.
const grace: RotationStatus = {
  passwordGeneration: 2,
  lastRotation: at(180),
  nextRotation: at(360),
  previousPasswordGeneration: 1,
  previousPasswordDeleteAt: at(240),
};

describe("first generation", () => {
  it("creates the password Secret and the User, waiting for the User", () => {
    const plan = planGenerations(input(), at(0));
    expect(plan.target).toEqual({ kind: "first", generation: 1 });
    expect(plan.actions).toEqual([create("passwordSecret", 1), create("account", 1)]);
    expect(plan.switchable).toBeUndefined();
    expect(plan.view).toEqual({
      status: "False",
      reason: "WaitingForAccount",
      message: `waiting for the topology operator to report user ${u(1)} Ready`,
    });
  });

  it("grants the Permission once the User is Ready", () => {
    const plan = planGenerations(input({ children: [gen(1, "present", "ready", "absent")] }), at(5));
    expect(plan.actions).toEqual([create("access", 1)]);
    expect(plan.view.message).toBe(
      `waiting for the topology operator to report the permission of user ${u(1)} Ready`,
    );
  });

  it("switches once both are Ready and the check passes", () => {
    const i = input({ children: [gen(1)] });
    const plan = planGenerations(i, at(10));
    expect(plan.switchable).toBe(1);
    expect(plan.view.reason).toBe("WaitingForAccount");
    expect(decideSwitch(i, plan, accepted, at(10))).toEqual({
      switchTo: {
        generation: 1,
        status: {
          passwordGeneration: 1,
          lastRotation: at(10),
          nextRotation: at(190),
          previousPasswordGeneration: undefined,
          previousPasswordDeleteAt: undefined,
        },
        view: { status: "True", reason: "Provisioned", message: provisioned(1) },
      },
      // Until the delivered Secret carries it, the status names no user.
      status: plan.status,
      view: {
        status: "True",
        reason: "Provisioned",
        message: `${provisioned(1)}; the delivered Secret does not carry user ${u(1)} yet`,
      },
    });
  });

  it("stays undelivered when the check fails", () => {
    const i = input({ children: [gen(1)] });
    const plan = planGenerations(i, at(10));
    const decision = decideSwitch(
      i,
      plan,
      { accepted: false, reason: "the broker refused the login" },
      at(10),
    );
    expect(decision.switchTo).toBeUndefined();
    expect(decision.status).toEqual(plan.status);
    expect(decision.view).toEqual({
      status: "False",
      reason: "WaitingForAccount",
      message: `user ${u(1)} is Ready but not delivered yet: the broker refused the login`,
    });
  });

  it("reports a refused first User with the topology operator's message", () => {
    const plan = planGenerations(
      input({ children: [gen(1, "present", "refused:connection refused")] }),
      at(5),
    );
    expect(plan.actions).toEqual([]);
    expect(plan.view).toEqual({
      status: "False",
      reason: "Failed",
      message: `the topology operator cannot create user ${u(1)}: connection refused`,
    });
  });

  it("reports a refused first Permission", () => {
    const plan = planGenerations(
      input({ children: [gen(1, "present", "ready", "refused:no vhost")] }),
      at(5),
    );
    expect(plan.view.message).toBe(
      `the topology operator cannot create the permission of user ${u(1)} on vhost "${VHOST}": no vhost`,
    );
  });

  it("starts with the declared generation and prunes a lower one still minting", () => {
    const plan = planGenerations(
      input({ spec: { declaredGeneration: 2 }, children: [gen(1, "present", "pending", "absent")] }),
      at(5),
    );
    expect(plan.actions).toEqual([del("account", 1)]);
    expect(plan.view.message).toBe(
      `waiting for the users of superseded generations to be removed before user ${u(2)} is created`,
    );
    const next = planGenerations(
      input({ spec: { declaredGeneration: 2 }, children: [gen(1, "present", "absent", "absent")] }),
      at(6),
    );
    expect(next.actions).toEqual([
      del("passwordSecret", 1),
      create("passwordSecret", 2),
      create("account", 2),
    ]);
  });

  it("waits for an unusable piece to go before creating it again", () => {
    const plan = planGenerations(input({ children: [gen(1, "absent", "ready", "absent")] }), at(5));
    expect(plan.actions).toEqual([del("account", 1)]);
    expect(plan.view.message).toBe(
      `waiting for an unusable piece of user ${u(1)} to be removed before it is created again`,
    );
  });
});

describe("converged", () => {
  it("does nothing before the schedule is due", () => {
    const plan = planGenerations(input({ status: live1, children: [gen(1)] }), at(179));
    expect(plan.target).toEqual({ kind: "none" });
    expect(plan.actions).toEqual([]);
    expect(plan.status).toEqual(live1);
    expect(plan.view).toEqual({ status: "True", reason: "Provisioned", message: provisioned(1) });
  });

  it("drops nextRotation when the schedule is turned off and never rotates", () => {
    const plan = planGenerations(
      input({ spec: { intervalMs: 0 }, status: live1, children: [gen(1)] }),
      at(99_999),
    );
    expect(plan.status.nextRotation).toBeUndefined();
    expect(plan.actions).toEqual([]);
  });

  it("moves nextRotation with a changed interval", () => {
    const plan = planGenerations(
      input({ spec: { intervalMs: 10 * MINUTE }, status: live1, children: [gen(1)] }),
      at(200),
    );
    expect(plan.status.nextRotation).toEqual(at(600));
    expect(plan.target.kind).toBe("none");
  });

  it("shows in nextRotation the moment a rotation window gives, and moves it past a window missed", () => {
    const window = { schedule: "0 1 * * *", timeZone: "UTC", durationMs: 60 * MINUTE };
    const spec = { window, seed: "uid-1" };
    const plan = planGenerations(input({ spec, status: live1, children: [gen(1)] }), at(200));
    const next = plan.status.nextRotation as Date;
    expect(next.getTime()).toBeGreaterThanOrEqual(at(3600).getTime());
    expect(next.getTime()).toBeLessThan(at(7200).getTime());
    expect(plan.target.kind).toBe("none");
    // The operator was away through the window: the next day's, not now.
    const late = planGenerations(input({ spec, status: live1, children: [gen(1)] }), at(7200));
    expect(late.target.kind).toBe("none");
    expect(late.status.nextRotation?.getTime()).toBeGreaterThanOrEqual(at(86_400 + 3600).getTime());
    // Queued at the moment, handed out after the window closed: the rotation starts, the moment stays.
    const queued = planGenerations(
      input({ spec, status: live1, children: [gen(1)], queuedAt: next }),
      at(7200 + 30),
    );
    expect(queued.target).toMatchObject({ kind: "rotate", generation: 2, causes: ["schedule"] });
    expect(queued.status.nextRotation).toEqual(next);
    // Its successor still on its way on a pass queued after the window closed: the moment that started
    // it stays shown, not the next window's.
    const started = { ...live1, nextRotation: next };
    const underWay = planGenerations(
      input({ spec, status: started, children: [gen(1), gen(2, "present", "ready", "absent")] }),
      at(7200 + 60),
    );
    expect(underWay.target).toEqual({ kind: "continue", generation: 2 });
    expect(underWay.status.nextRotation).toEqual(next);
    // A queue time later than now (a clock stepped back) counts as now.
    const ahead = planGenerations(
      input({ spec, status: live1, children: [gen(1)], queuedAt: at(99_999) }),
      at(200),
    );
    expect(ahead.status.nextRotation).toEqual(next);
  });

  it("anchors a live generation without lastRotation on now", () => {
    const plan = planGenerations(input({ status: { passwordGeneration: 1 }, children: [gen(1)] }), at(50));
    expect(plan.status.lastRotation).toEqual(at(50));
    expect(plan.status.nextRotation).toEqual(at(230));
  });

  it("reports a live User the broker refuses", () => {
    const plan = planGenerations(
      input({ status: live1, children: [gen(1, "present", "refused:boom")] }),
      at(5),
    );
    expect(plan.view).toEqual({
      status: "False",
      reason: "Failed",
      message: `the topology operator cannot create user ${u(1)}: boom`,
    });
  });
});

describe("rotation", () => {
  it("mints the successor when the schedule is due, VhostReady staying True", () => {
    const plan = planGenerations(input({ status: live1, children: [gen(1)] }), at(180));
    expect(plan.target).toEqual({ kind: "rotate", generation: 2, causes: ["schedule"] });
    expect(plan.actions).toEqual([create("passwordSecret", 2), create("account", 2)]);
    expect(plan.view).toEqual({
      status: "True",
      reason: "Provisioned",
      message: `${provisioned(1)}; its successor user ${u(2)} is being created`,
    });
  });

  it("switches to a Ready successor: previous, lastRotation, nextRotation from the switch; no deleteAt before delivery", () => {
    const i = input({ status: live1, children: [gen(1), gen(2)] });
    const plan = planGenerations(i, at(195));
    expect(plan.target).toEqual({ kind: "continue", generation: 2 });
    expect(plan.switchable).toBe(2);
    expect(plan.view.message).toBe(
      `${provisioned(1)}; its successor user ${u(2)} is Ready and is checked against the broker before it takes over`,
    );
    expect(decideSwitch(i, plan, accepted, at(195))).toEqual({
      switchTo: {
        generation: 2,
        status: {
          passwordGeneration: 2,
          lastRotation: at(195),
          nextRotation: at(375),
          previousPasswordGeneration: 1,
          previousPasswordDeleteAt: undefined,
        },
        view: { status: "True", reason: "Provisioned", message: provisioned(2) },
      },
      // Until the delivered Secret carries generation 2, generation 1 stays the delivered one.
      status: plan.status,
      view: {
        status: "True",
        reason: "Provisioned",
        message: `${provisioned(1)}; its successor user ${u(2)} is Ready and takes over once the delivered Secret carries it`,
      },
    });
  });

  it("keeps the live generation delivered when the broker does not accept the successor", () => {
    const i = input({ status: live1, children: [gen(1), gen(2)] });
    const plan = planGenerations(i, at(195));
    const decision = decideSwitch(
      i,
      plan,
      { accepted: false, reason: "the broker refused the successor's login" },
      at(195),
    );
    expect(decision).toEqual({
      status: live1,
      view: {
        status: "True",
        reason: "Provisioned",
        message: `${provisioned(1)}; its successor user ${u(2)} is not switched to yet: the broker refused the successor's login`,
      },
    });
  });

  it("passes a plan that cannot switch through unchanged", () => {
    const i = input({ status: live1, children: [gen(1)] });
    const plan = planGenerations(i, at(10));
    expect(decideSwitch(i, plan, accepted, at(10))).toEqual({
      status: plan.status,
      view: plan.view,
    });
  });

  it("goes straight to a raised generation, skipping the ones between", () => {
    const i = input({ spec: { declaredGeneration: 3, intervalMs: 0 }, status: live1, children: [gen(1)] });
    const plan = planGenerations(i, at(20));
    expect(plan.target).toEqual({ kind: "rotate", generation: 3, causes: ["declared"] });
    expect(plan.actions).toEqual([create("passwordSecret", 3), create("account", 3)]);
    const ready = input({ ...i, spec: i.spec, children: [gen(1), gen(3)] });
    const decision = decideSwitch(ready, planGenerations(ready, at(30)), accepted, at(30));
    expect(decision.switchTo?.status).toMatchObject({
      passwordGeneration: 3,
      previousPasswordGeneration: 1,
      nextRotation: undefined,
    });
  });

  it.each([
    ["password Secret gone", gen(1, "absent"), ["lostPassword"], "True"],
    ["password empty", gen(1, "empty"), ["lostPassword"], "True"],
    ["User gone", gen(1, "present", "absent"), ["lostAccount"], "False"],
    ["Permission gone", gen(1, "present", "ready", "absent"), ["lostAccess"], "False"],
  ] as const)("rotates at once when the live generation's %s", (_name, live, causes, status) => {
    const plan = planGenerations(input({ status: live1, children: [live] }), at(30));
    expect(plan.target).toEqual({ kind: "rotate", generation: 2, causes });
    expect(plan.actions).toEqual([create("passwordSecret", 2), create("account", 2)]);
    expect(plan.view.status).toBe(status);
    expect(plan.view.message).toMatch(/its successor user ".*-v2" is being created$/);
  });

  it("continues a refused successor, reporting it, then replaces it after a raise", () => {
    const children = [gen(1), gen(2, "present", "refused:password rejected", "absent")];
    const refused = planGenerations(input({ status: live1, children }), at(200));
    expect(refused.target).toEqual({ kind: "continue", generation: 2 });
    expect(refused.actions).toEqual([]);
    expect(refused.view).toEqual({
      status: "False",
      reason: "Failed",
      message:
        `the topology operator cannot create user ${u(2)}: password rejected; the delivered user ${u(1)} ` +
        "stays in use until spec.passwordGeneration is raised above 2",
    });
    const raised = planGenerations(
      input({ spec: { declaredGeneration: 3 }, status: live1, children }),
      at(210),
    );
    expect(raised.target).toEqual({ kind: "rotate", generation: 3, causes: ["declared", "schedule"] });
    // The refused User goes first; generation 3's User is created once it is gone.
    expect(raised.actions).toEqual([del("account", 2)]);
    const gone = [gen(1), gen(2, "present", "absent", "absent")];
    const next = planGenerations(
      input({ spec: { declaredGeneration: 3 }, status: live1, children: gone }),
      at(211),
    );
    expect(next.actions).toEqual([
      del("passwordSecret", 2),
      create("passwordSecret", 3),
      create("account", 3),
    ]);
  });

  it("prunes strays but keeps live and previous", () => {
    const status: RotationStatus = { ...grace, passwordGeneration: 3, previousPasswordGeneration: 2 };
    const children = [
      gen(1),
      gen(2),
      gen(3),
      gen(4, "present", "absent", "absent"),
      gen(6, "present", "deleting", "deleting"),
    ];
    const plan = planGenerations(input({ status, children }), at(200));
    expect(plan.target).toEqual({ kind: "none" });
    expect(plan.actions).toEqual([del("access", 1), del("account", 1), del("passwordSecret", 4)]);
  });

  it("keeps the target while pruning", () => {
    const children = [gen(1), gen(2, "present", "pending", "absent"), gen(5)];
    const plan = planGenerations(input({ status: live1, children }), at(10));
    expect(plan.target).toEqual({ kind: "continue", generation: 5 });
    expect(plan.actions).toEqual([del("account", 2)]);
    expect(plan.switchable).toBe(5);
  });
});

describe("grace period", () => {
  it("starts no rotation and keeps the previous generation", () => {
    const plan = planGenerations(
      input({ spec: { declaredGeneration: 3 }, status: grace, children: [gen(1), gen(2)] }),
      at(200),
    );
    expect(plan.target).toEqual({ kind: "held", causes: ["declared"] });
    expect(plan.actions).toEqual([]);
    expect(plan.view.message).toBe(
      `${provisioned(2)}; a new user is created once user ${u(1)} is removed after its grace period`,
    );
  });

  it("lets a Ready successor wait until the previous generation is swept", () => {
    const plan = planGenerations(input({ status: grace, children: [gen(1), gen(2), gen(3)] }), at(200));
    expect(plan.target).toEqual({ kind: "continue", generation: 3 });
    expect(plan.switchable).toBeUndefined();
    expect(plan.view.message).toBe(
      `${provisioned(2)}; its successor user ${u(3)} is Ready and takes over once user ${u(1)} is removed after its grace period`,
    );
  });

  it("sweeps in two passes, then the schedule resumes", () => {
    const first = planGenerations(input({ status: grace, children: [gen(1), gen(2)] }), at(240));
    expect(first.actions).toEqual([del("access", 1), del("account", 1)]);
    expect(first.status).toEqual(grace);

    const waiting = planGenerations(
      input({ status: first.status, children: [gen(1, "present", "deleting", "absent"), gen(2)] }),
      at(241),
    );
    expect(waiting.actions).toEqual([]);

    const second = planGenerations(
      input({ status: waiting.status, children: [gen(1, "present", "absent", "absent"), gen(2)] }),
      at(242),
    );
    expect(second.actions).toEqual([del("passwordSecret", 1)]);
    expect(second.status).toEqual({
      ...grace,
      previousPasswordGeneration: undefined,
      previousPasswordDeleteAt: undefined,
    });

    const due = planGenerations(input({ status: second.status, children: [gen(2)] }), at(360));
    expect(due.target).toEqual({ kind: "rotate", generation: 3, causes: ["schedule"] });
  });
});
