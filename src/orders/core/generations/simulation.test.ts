// Drives the generation functions pass after pass as the reconciler would, against a tiny in-memory world
// whose topology operator acts one pass after each write, and checks the promises at every step: the
// delivered credential always logs in, and the broker never holds more than two of the order's users.
import { describe, expect, it } from "vitest";
import {
  decideSwitch,
  planGenerations,
  startGrace,
  untilDeadline,
  type ChildAction,
  type ChildState,
  type GenerationChildren,
  type RotationSpec,
  type RotationStatus,
  type SwitchCheck,
  type ResourceView,
} from "../generations.ts";
import { MINUTE, SPEC, at, userName, VHOST } from "../../../../harness/fakes/generation-fixtures.ts";
import { viewWords } from "../../rabbitmq/conditions.ts";

type CrState = "pending" | "ready" | "refused" | "deleting";

class World {
  readonly secrets = new Map<number, string>();
  readonly users = new Map<number, CrState>();
  readonly permissions = new Map<number, CrState>();
  /** The broker: user name → password and whether it holds the permission on the vhost. */
  readonly broker = new Map<string, { password: string; permitted: boolean }>();
  /** Generations whose User the broker refuses. */
  readonly refused = new Set<number>();
  /** Generations whose User a faulty topology operator reports Ready without reaching the broker. */
  readonly phantom = new Set<number>();
  private minted = 0;

  observe(): GenerationChildren[] {
    const generations = new Set([...this.secrets.keys(), ...this.users.keys(), ...this.permissions.keys()]);
    const state = (s: CrState | undefined): ChildState =>
      s === undefined
        ? { phase: "absent" }
        : s === "refused"
          ? { phase: "refused", message: "refused by the broker" }
          : { phase: s };
    return [...generations].map((generation) => {
      const password = this.secrets.get(generation);
      return {
        generation,
        password: password === undefined ? "absent" : password === "" ? "empty" : "present",
        account: state(this.users.get(generation)),
        access: state(this.permissions.get(generation)),
      };
    });
  }

  apply(actions: readonly ChildAction[]): void {
    for (const { op, kind, generation } of actions) {
      const map = kind === "account" ? this.users : kind === "access" ? this.permissions : undefined;
      if (kind === "passwordSecret") {
        if (op === "create") {
          expect(this.secrets.has(generation)).toBe(false);
          this.secrets.set(generation, `password-${++this.minted}`);
        } else this.secrets.delete(generation);
      } else if (op === "create") {
        expect(map?.has(generation)).toBe(false);
        map?.set(generation, "pending");
      } else if (map?.has(generation)) map.set(generation, "deleting");
    }
  }

  /** One round of the topology operator; true when it changed anything (a watch event for the order). */
  topologyStep(): boolean {
    let changed = false;
    for (const [n, s] of this.permissions) {
      const user = this.broker.get(userName(n));
      if (s === "deleting") {
        if (user) user.permitted = false;
        this.permissions.delete(n);
        changed = true;
      } else if (s === "pending" && this.users.get(n) === "ready") {
        if (user) user.permitted = true;
        this.permissions.set(n, "ready");
        changed = true;
      }
    }
    for (const [n, s] of this.users) {
      const password = this.secrets.get(n);
      if (s === "deleting") {
        this.broker.delete(userName(n));
        this.users.delete(n);
        changed = true;
      } else if (s === "pending" && this.refused.has(n)) {
        this.users.set(n, "refused");
        changed = true;
      } else if (s === "pending" && password) {
        if (!this.phantom.has(n)) this.broker.set(userName(n), { password, permitted: false });
        this.users.set(n, "ready");
        changed = true;
      }
    }
    return changed;
  }

  /** What the operator's pre-switch check sees: a login with the successor's credentials. */
  check(generation: number): SwitchCheck {
    const user = this.broker.get(userName(generation));
    return user !== undefined && user.password === this.secrets.get(generation) && user.permitted
      ? { accepted: true }
      : { accepted: false, reason: `the broker does not accept user "${userName(generation)}"` };
  }

  accepts(generation: number, password: string): boolean {
    const user = this.broker.get(userName(generation));
    return user !== undefined && user.password === password && user.permitted;
  }
}

interface Event {
  readonly at: number;
  readonly apply: (sim: Simulation) => void;
}

interface Pass {
  readonly now: number;
  readonly status: RotationStatus;
  readonly view: ResourceView;
  readonly switched: boolean;
}

class Simulation {
  readonly world = new World();
  spec: RotationSpec;
  status: RotationStatus = {};
  delivered: { generation: number; password: string } | undefined;
  /** The credential delivered before the last switch, valid until `until` (seconds) for late readers. */
  superseded: { generation: number; password: string; until: number } | undefined;
  /** A generation whose pieces an event removed: its login may fail until a successor is delivered. */
  damaged: number | undefined;
  readonly passes: Pass[] = [];
  readonly switches: { now: number; generation: number }[] = [];
  maxUsers = 0;

  constructor(spec: Partial<RotationSpec> = {}) {
    this.spec = { ...SPEC, ...spec };
  }

  run(until: number, events: Event[] = []): this {
    const pending = [...events].sort((a, b) => a.at - b.at);
    let now = 0;
    while (now <= until) {
      while (pending.length > 0 && (pending[0]?.at ?? Infinity) <= now) pending.shift()?.apply(this);
      const changed = this.world.topologyStep();
      this.assertPromises(now);
      const busy = this.pass(now) || changed;
      this.assertPromises(now);
      // A write of our own or of the topology operator wakes the order again at once (1 s later);
      // otherwise it sleeps until its requeue deadline or the next outside event.
      const requeue = untilDeadline(this.status, at(now));
      const wakeups = [pending[0]?.at, requeue === undefined ? undefined : now + Math.max(1, requeue / 1000)];
      const next = busy ? now + 1 : Math.min(...wakeups.map((w) => w ?? Infinity));
      if (next === Infinity) break;
      now = next;
    }
    return this;
  }

  private pass(now: number): boolean {
    const input = {
      spec: this.spec,
      status: this.status,
      children: this.world.observe(),
      resource: VHOST,
      userName,
      words: viewWords,
      delivered: this.delivered
        ? ({ kind: "carries", generation: this.delivered.generation } as const)
        : ({ kind: "none" } as const),
    };
    const plan = planGenerations(input, at(now));
    this.world.apply(plan.actions);
    const generation = plan.switchable;
    const decision =
      generation === undefined
        ? { status: plan.status, view: plan.view }
        : decideSwitch(input, plan, this.world.check(generation), at(now));
    // Delivery succeeds in the same pass whenever the password to deliver exists: the switch is done and
    // the grace period starts.
    const target = decision.switchTo?.generation ?? decision.status.passwordGeneration ?? 0;
    const deliverable = this.world.secrets.get(target) !== undefined;
    const switched = deliverable && decision.switchTo !== undefined;
    const status = deliverable
      ? startGrace(this.spec, decision.switchTo?.status ?? decision.status, at(now))
      : decision.status;
    const view = switched ? (decision.switchTo?.view ?? decision.view) : decision.view;
    if (switched && generation !== undefined) {
      const until = status.previousPasswordDeleteAt;
      if (this.delivered !== undefined && until !== undefined) {
        this.superseded = { ...this.delivered, until: (until.getTime() - at(0).getTime()) / 1000 };
      }
      this.delivered = { generation, password: this.world.secrets.get(generation) ?? "" };
      this.switches.push({ now, generation });
    }
    const statusChanged = JSON.stringify(status) !== JSON.stringify(this.status);
    this.status = status;
    this.passes.push({ now, status, view, switched });
    return plan.actions.length > 0 || statusChanged;
  }

  private assertPromises(now: number): void {
    const where = `at ${now}s`;
    this.maxUsers = Math.max(this.maxUsers, this.world.users.size, this.world.broker.size);
    expect(this.world.users.size, where).toBeLessThanOrEqual(2);
    expect(this.world.broker.size, where).toBeLessThanOrEqual(2);
    const late = this.superseded;
    if (late !== undefined && now < late.until && late.generation !== this.damaged) {
      expect(this.world.accepts(late.generation, late.password), `${where}, superseded`).toBe(true);
    }
    if (this.delivered === undefined) return;
    expect(this.status.passwordGeneration, where).toBe(this.delivered.generation);
    if (this.delivered.generation === this.damaged) return;
    expect(this.world.accepts(this.delivered.generation, this.delivered.password), where).toBe(true);
    expect(this.world.users.get(this.delivered.generation), where).toBe("ready");
    expect(this.world.permissions.get(this.delivered.generation), where).toBe("ready");
  }

  lastView(): ResourceView | undefined {
    return this.passes.at(-1)?.view;
  }
}

const raise = (at: number, generation: number): Event => ({
  at,
  apply: (sim) => (sim.spec = { ...sim.spec, declaredGeneration: generation }),
});

describe("simulated reconciler", () => {
  it("rotates on a 3m/1m schedule from generation 1 to 2 to 3, sweeping each predecessor after its grace", () => {
    const sim = new Simulation().run(11 * 60);
    const [first, second, third] = sim.switches;
    expect(sim.switches.map((s) => s.generation).slice(0, 3)).toEqual([1, 2, 3]);
    expect(first?.now).toBeLessThan(10);
    // Each successor is minted when the schedule is due and takes over a few passes later.
    expect(second!.now - first!.now).toBeGreaterThanOrEqual(180);
    expect(second!.now - first!.now).toBeLessThan(190);
    expect(third!.now - second!.now).toBeGreaterThanOrEqual(180);
    expect(third!.now - second!.now).toBeLessThan(190);
    // nextRotation is anchored on the switch.
    const afterSecond = sim.passes.find((p) => p.now === second!.now)!.status;
    expect(afterSecond.nextRotation).toEqual(at(second!.now + 180));
    expect(afterSecond.previousPasswordDeleteAt).toEqual(at(second!.now + 60));
    // The superseded user is gone from the broker shortly after its delete time.
    const sweptAt = sim.passes.find(
      (p) => p.now > second!.now && p.status.previousPasswordGeneration === undefined,
    )!.now;
    expect(sweptAt - (second!.now + 60)).toBeLessThanOrEqual(3);
    expect(sim.maxUsers).toBe(2);
    expect(sim.lastView()?.status).toBe("True");
  });

  it("does not rotate with the schedule off, and a manual raise rotates at once, skipping generations", () => {
    const sim = new Simulation({ intervalMs: 0 }).run(2 * 3600, [raise(600, 3)]);
    expect(sim.switches.map((s) => s.generation)).toEqual([1, 3]);
    expect(sim.switches[1]!.now - 600).toBeLessThan(5);
    expect(sim.status.nextRotation).toBeUndefined();
    expect(sim.status.previousPasswordGeneration).toBeUndefined();
    expect(sim.world.secrets.has(2)).toBe(false);
    expect([...sim.world.users.keys()]).toEqual([3]);
  });

  it("holds a raise made during a grace period until the previous user is swept", () => {
    const sim = new Simulation({ intervalMs: 10 * MINUTE }).run(20 * 60, [raise(5, 2), raise(20, 5)]);
    const [, second, third] = sim.switches;
    expect(second?.generation).toBe(2);
    expect(third?.generation).toBe(5);
    expect(third!.now).toBeGreaterThanOrEqual(second!.now + 60);
    expect(sim.maxUsers).toBe(2);
  });

  it("continues a refused successor with the live user delivered, then replaces it after a raise", () => {
    const sim = new Simulation();
    sim.world.refused.add(2);
    sim.run(300);
    expect(sim.status.passwordGeneration).toBe(1);
    expect(sim.world.users.get(2)).toBe("refused");
    expect(sim.lastView()).toMatchObject({ status: "False", reason: "Failed" });
    expect(sim.lastView()?.message).toContain(`cannot create user "${userName(2)}"`);
    sim.run(400, [raise(301, 3)]);
    expect(sim.status.passwordGeneration).toBe(3);
    expect(sim.world.users.has(2)).toBe(false);
    expect(sim.world.secrets.has(2)).toBe(false);
    expect(sim.lastView()?.status).toBe("True");
  });

  it("never switches to a successor the broker does not accept", () => {
    const sim = new Simulation();
    sim.world.phantom.add(2);
    sim.run(400);
    expect(sim.switches.map((s) => s.generation)).toEqual([1]);
    expect(sim.lastView()).toMatchObject({ status: "True", reason: "Provisioned" });
    expect(sim.lastView()?.message).toContain(
      `is not switched to yet: the broker does not accept user "${userName(2)}"`,
    );
  });

  it("replaces a live generation whose password Secret lost its password, the delivered login staying valid", () => {
    const sim = new Simulation({ intervalMs: 0 }).run(100, [
      { at: 60, apply: (s) => s.world.secrets.set(1, "") },
    ]);
    expect(sim.switches.map((s) => s.generation)).toEqual([1, 2]);
    expect(sim.switches[1]!.now - 60).toBeLessThan(5);
  });

  it.each([
    ["User", (w: World) => w.users.set(1, "deleting")],
    ["Permission", (w: World) => w.permissions.set(1, "deleting")],
  ])("replaces a live generation whose %s was deleted", (_piece, damage) => {
    const event: Event = {
      at: 60,
      apply: (s) => {
        damage(s.world);
        s.damaged = 1;
      },
    };
    const sim = new Simulation({ intervalMs: 0 }).run(200, [event]);
    expect(sim.switches.map((s) => s.generation)).toEqual([1, 2]);
    expect(sim.switches[1]!.now - 60).toBeLessThan(6);
    expect(sim.world.users.has(1)).toBe(false);
    expect(sim.status.previousPasswordGeneration).toBeUndefined();
  });

  it("sleeps between deadlines instead of polling", () => {
    const sim = new Simulation().run(3600);
    // Per rotation: a few passes to mint and switch, two around the sweep; nothing in between.
    expect(sim.switches.length).toBeGreaterThanOrEqual(19);
    expect(sim.passes.length / sim.switches.length).toBeLessThan(12);
  });
});
