import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../harness/fakes/fake-clock.ts";
import { Precedence } from "./precedence.ts";

function setup(paceMs = 0) {
  const clock = new FakeClock();
  const precedence = new Precedence(clock, { holdMs: 1_000, paceMs });
  let wakes = 0;
  precedence.subscribe(() => wakes++);
  return { clock, precedence, wakes: () => wakes };
}

describe("Precedence", () => {
  it("lets routine passes start as they come while no urgent pass started lately", () => {
    const { precedence } = setup(20);
    for (let i = 0; i < 3; i++) {
      expect(precedence.routineMayStart()).toBe(true);
      precedence.started("routine");
    }
  });

  it("holds routine passes to one at a time from an urgent pass's start until the hold ends", () => {
    const { clock, precedence, wakes } = setup();
    precedence.started("urgent")();
    expect(precedence.routineMayStart()).toBe(true);
    const end = precedence.started("routine");
    expect(precedence.routineMayStart()).toBe(false);
    // The routine pass's end hands the single place over through a timer, a turn of the event loop.
    end();
    expect(precedence.routineMayStart()).toBe(false);
    expect(wakes()).toBe(0);
    clock.advance(0);
    expect(wakes()).toBe(1);
    expect(precedence.routineMayStart()).toBe(true);
    precedence.started("routine");
    clock.advance(500);
    expect(precedence.routineMayStart()).toBe(false);
    // The urgent pass ended at once, but its hold bridges the gap to the next pass of the same work.
    clock.advance(500);
    expect(wakes()).toBe(2);
    expect(precedence.routineMayStart()).toBe(true);
  });

  it("spaces the routine passes' starts by the pace while they are held back", () => {
    const { clock, precedence, wakes } = setup(20);
    precedence.started("urgent");
    precedence.started("routine")();
    clock.advance(5);
    // Ended after 5 ms: the next may start 20 ms after the last one started, not before.
    expect(precedence.routineMayStart()).toBe(false);
    clock.advance(14);
    expect(wakes()).toBe(0);
    clock.advance(1);
    expect(wakes()).toBe(1);
    expect(precedence.routineMayStart()).toBe(true);
  });

  it("renews the hold with every urgent start", () => {
    const { clock, precedence } = setup();
    precedence.started("urgent");
    precedence.started("routine");
    clock.advance(400);
    precedence.started("urgent");
    clock.advance(600);
    // The routine pass has now run 1 s: it no longer holds the place, whatever the hold.
    expect(precedence.routineMayStart()).toBe(true);
    precedence.started("routine");
    clock.advance(300);
    expect(precedence.routineMayStart()).toBe(false);
    clock.advance(100);
    expect(precedence.routineMayStart()).toBe(true);
  });

  it("does not let a routine pass that hangs hold the routine work back", () => {
    const { clock, precedence, wakes } = setup(20);
    precedence.started("routine");
    for (let t = 0; t < 4; t++) {
      precedence.started("urgent");
      clock.advance(200);
    }
    expect(precedence.routineMayStart()).toBe(false);
    // A timer wakes the held queues as the hung pass ages out, 1 s after its start.
    expect(wakes()).toBe(0);
    clock.advance(200);
    expect(precedence.routineMayStart()).toBe(true);
    expect(wakes()).toBe(1);
  });

  it("wakes the queues held back from a different one each time, so that none always takes the place", () => {
    const clock = new FakeClock();
    const precedence = new Precedence(clock, { holdMs: 1_000, paceMs: 20 });
    const firstWoken: string[] = [];
    let woken = 0;
    for (const name of ["queues", "exchanges", "bindings"]) {
      precedence.subscribe(() => {
        if (woken++ % 3 === 0) firstWoken.push(name);
      });
    }
    precedence.started("urgent");
    for (let i = 0; i < 4; i++) {
      precedence.started("routine")();
      expect(precedence.routineMayStart()).toBe(false);
      clock.advance(20);
    }
    expect(firstWoken).toEqual(["queues", "exchanges", "bindings", "queues"]);
  });

  it("refuses a hold that is not positive and a pace below zero", () => {
    expect(() => new Precedence(new FakeClock(), { holdMs: 0, paceMs: 0 })).toThrow("must be positive");
    expect(() => new Precedence(new FakeClock(), { holdMs: 1, paceMs: -1 })).toThrow("must not be negative");
  });
});
