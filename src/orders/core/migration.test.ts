// A migration as the generation machine decides it (the ControlPlane names another backend), where the
// status says the order is, its Events, and the container's name on each backend.
import { describe, expect, it } from "vitest";
import { at, gen, input } from "../../../harness/fakes/generation-fixtures.ts";
import { containerNameOn, isContainerName, movedContainerName, type PlacedContainer } from "./containers.ts";
import { planGenerations, type GenerationChildren, type RotationStatus } from "./generations.ts";
import { migrationEvents, migrationNote, placementOf, type Migration } from "./migration.ts";

const on = (backend: string, c: GenerationChildren): GenerationChildren => ({ ...c, backend });
const live1: RotationStatus = { passwordGeneration: 1, lastRotation: at(0), nextRotation: at(180) };

describe("the generation machine on a changed backend", () => {
  it("moves a live generation on the old backend by a rotation on the new one", () => {
    const plan = planGenerations(input({ status: live1, children: [on("a", gen(1))], backend: "b" }), at(10));
    expect(plan.target).toEqual({ kind: "rotate", generation: 2, causes: ["moved"] });
    expect(plan.actions).toEqual([
      { op: "create", kind: "passwordSecret", generation: 2 },
      { op: "create", kind: "account", generation: 2 },
    ]);
  });

  it("continues a successor on the new backend and switches once it is complete", () => {
    const children = [on("a", gen(1)), on("b", gen(2))];
    const plan = planGenerations(input({ status: live1, children, backend: "b" }), at(10));
    expect(plan.target).toEqual({ kind: "continue", generation: 2 });
    expect(plan.switchable).toBe(2);
  });

  it("holds the move while a grace period runs, and keeps the previous generation on the old backend", () => {
    const status: RotationStatus = {
      passwordGeneration: 2,
      lastRotation: at(0),
      previousPasswordGeneration: 1,
      previousPasswordDeleteAt: at(60),
    };
    // Switched to b, then the bus changed back to a: the live user on b waits for the sweep of the one on a.
    const children = [on("a", gen(1)), on("b", gen(2))];
    const plan = planGenerations(input({ status, children, backend: "a" }), at(10));
    expect(plan.target).toEqual({ kind: "held", causes: ["moved"] });
    expect(plan.actions).toEqual([]);
  });

  it("abandons a successor on a backend the ControlPlane no longer names (the bus changed back)", () => {
    const children = [on("a", gen(1)), on("b", gen(2))];
    const plan = planGenerations(input({ status: live1, children, backend: "a" }), at(10));
    expect(plan.target).toEqual({ kind: "none" });
    expect(plan.switchable).toBeUndefined();
    // Its children first; its password Secret once they are gone (a later pass).
    expect(plan.actions.map((a) => `${a.op} ${a.kind} ${a.generation}`)).toEqual([
      "delete access 2",
      "delete account 2",
    ]);
  });

  it("numbers a new generation above every generation another backend holds", () => {
    // Live on a, a successor begun on b, and the bus moved on to c: generation 2's names are b's.
    const children = [on("a", gen(1)), on("b", gen(2, "present", "pending", "absent"))];
    const plan = planGenerations(input({ status: live1, children, backend: "c" }), at(10));
    expect(plan.target).toEqual({ kind: "rotate", generation: 3, causes: ["moved"] });
    // Generation 3 waits until generation 2's User is gone: the order never holds more than two.
    expect(plan.actions.map((a) => `${a.op} ${a.kind} ${a.generation}`)).toEqual(["delete account 2"]);
  });

  it("starts a first generation on the new backend above one begun on the old", () => {
    const plan = planGenerations(
      input({ children: [on("a", gen(1, "present", "pending", "absent"))], backend: "b" }),
      at(0),
    );
    expect(plan.target).toEqual({ kind: "first", generation: 2 });
  });

  it("treats every generation as placed when no backend is given", () => {
    const plan = planGenerations(input({ status: live1, children: [on("a", gen(1))] }), at(10));
    expect(plan.target).toEqual({ kind: "none" });
  });
});

describe("placementOf", () => {
  it("names nothing before a delivery", () => {
    expect(placementOf({ current: "b", delivering: false, delivered: undefined, held: ["b"] })).toEqual({});
  });

  it("is Provisioning while the delivered user is on the old backend", () => {
    expect(placementOf({ current: "b", delivering: true, delivered: "a", held: ["a", "b"] })).toEqual({
      backend: "a",
      migration: { from: "a", to: "b", phase: "Provisioning" },
    });
  });

  it("is Draining from the switch while anything is left on the old backend", () => {
    expect(placementOf({ current: "b", delivering: true, delivered: "b", held: ["a", undefined] })).toEqual({
      backend: "b",
      migration: { from: "a", to: "b", phase: "Draining" },
    });
  });

  it("ends once nothing of the order is on another backend", () => {
    expect(placementOf({ current: "b", delivering: true, delivered: undefined, held: ["b"] })).toEqual({
      backend: "b",
    });
  });
});

describe("migration Events and notes", () => {
  const provisioning: Migration = { from: "a", to: "b", phase: "Provisioning" };
  const draining: Migration = { from: "a", to: "b", phase: "Draining" };
  const reasons = (before?: Migration, after?: Migration) =>
    migrationEvents("RabbitmqCluster", before, after, after?.to ?? "b").map((e) => `${e.type} ${e.reason}`);

  it("says each step once", () => {
    expect(reasons(undefined, provisioning)).toEqual(["Normal MigrationStarted"]);
    expect(reasons(provisioning, provisioning)).toEqual([]);
    expect(reasons(provisioning, draining)).toEqual(["Normal MigrationSwitched"]);
    expect(reasons(draining, undefined)).toEqual(["Normal MigrationCompleted"]);
    expect(reasons(provisioning, { from: "b", to: "a", phase: "Draining" })).toEqual([
      "Normal MigrationRedirected",
    ]);
    // Back on the old backend before the switch, with nothing left on the other: redirected, not completed.
    const back = migrationEvents("RabbitmqCluster", provisioning, undefined, "a");
    expect(back.map((e) => e.reason)).toEqual(["MigrationRedirected"]);
    expect(back[0]?.message).toContain('names RabbitmqCluster "a" again, no longer "b"');
  });

  it("names both backends in the condition's note", () => {
    expect(migrationNote("RabbitmqCluster", provisioning)).toContain(
      'moving from RabbitmqCluster "a" to "b": the delivered user stays on "a"',
    );
    expect(migrationNote("RabbitmqCluster", draining)).toContain('moved from RabbitmqCluster "a" to "b"');
    expect(migrationNote("RabbitmqCluster", undefined)).toBe("");
  });
});

describe("container names", () => {
  const base = "svc-cebe0e7a-vhost-vhost";
  const placed = (name: string, backend: string): PlacedContainer => ({ object: {}, name, backend });

  it("keeps the base name for the first backend and names a moved one after its backend", () => {
    expect(containerNameOn(base, "a", [])).toBe(base);
    expect(containerNameOn(base, "a", [placed(base, "a")])).toBe(base);
    const moved = containerNameOn(base, "b", [placed(base, "a")]);
    expect(moved).toBe(movedContainerName(base, "b"));
    expect(moved).toMatch(new RegExp(`^${base}-[0-9a-f]{8}$`));
    expect(containerNameOn(base, "b", [placed(base, "a"), placed(moved, "b")])).toBe(moved);
  });

  it("never makes a second container on a backend that has one, whatever its name", () => {
    // Moved a to b, then a released: back on a, the base name is free again; on b, b's stays.
    const moved = movedContainerName(base, "b");
    expect(containerNameOn(base, "b", [placed(moved, "b")])).toBe(moved);
    expect(containerNameOn(base, "a", [placed(moved, "b")])).toBe(base);
  });

  it("recognises the order's container names only", () => {
    expect(isContainerName(base, base)).toBe(true);
    expect(isContainerName(base, movedContainerName(base, "b"))).toBe(true);
    expect(isContainerName(base, `${base}-1`)).toBe(false);
    expect(isContainerName(base, `${base}-user-v1`)).toBe(false);
  });
});
