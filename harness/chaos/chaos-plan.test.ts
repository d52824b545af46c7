import { describe, expect, it } from "vitest";
import { FULL, SHORT, plan } from "./chaos-plan.ts";

describe("the chaos plan's clock-steps", () => {
  it("step the leader's wall clock by the configured offsets in turn, for a planned time, with no kill", () => {
    for (const seed of [1, 514658066, 2 ** 31 - 1]) {
      const steps = plan({ ...FULL, seed }).filter((f) => f.kind === "clock-step");
      expect(steps.map((f) => f.stepS).sort()).toEqual([-300, 300]);
      for (const f of steps) {
        expect(f.killAtMs).toBeUndefined();
        expect(f.durationMs).toBeGreaterThanOrEqual(FULL.clockStep.ms[0]);
        expect(f.durationMs).toBeLessThanOrEqual(FULL.clockStep.ms[1]);
        expect(f.atMs + f.durationMs).toBeLessThanOrEqual(FULL.faultWindowMs);
      }
      expect(plan({ ...SHORT, seed }).filter((f) => f.kind === "clock-step")).toEqual([
        expect.objectContaining({ stepS: -300 }),
      ]);
    }
  });

  it("leave a seed's faults drawn before them as they were without them", () => {
    // The emptied broker and the lost live User are drawn after the clock-steps: they move with them.
    const before = (f: { kind: string }) =>
      !["clock-step", "emptied-broker", "lost-live-user"].includes(f.kind);
    for (const seed of [7, 514658066]) {
      const without = plan({ ...SHORT, seed, outages: { ...SHORT.outages, "clock-step": 0 } });
      expect(plan({ ...SHORT, seed }).filter(before)).toEqual(without.filter(before));
    }
  });
});

describe("the chaos plan's emptied broker and lost live User", () => {
  const added = new Set(["emptied-broker", "lost-live-user"]);

  it("come in the full run as configured, each at least once, in the window, with no kill and no length", () => {
    expect(FULL.outages["emptied-broker"]).toBeGreaterThanOrEqual(1);
    expect(FULL.outages["lost-live-user"]).toBeGreaterThanOrEqual(1);
    for (const seed of [1, 514658066, 2 ** 31 - 1]) {
      for (const config of [FULL, SHORT]) {
        const faults = plan({ ...config, seed });
        for (const kind of added) {
          const of = faults.filter((f) => f.kind === kind);
          expect(of).toHaveLength(config.outages[kind as "emptied-broker" | "lost-live-user"]);
          for (const f of of) {
            expect(f.killAtMs).toBeUndefined();
            expect(f.durationMs).toBe(0);
            expect(f.atMs).toBeGreaterThanOrEqual(0);
            expect(f.atMs).toBeLessThanOrEqual(config.faultWindowMs * 0.9);
          }
        }
      }
    }
  });

  it("the short variant has a lost live User and no emptied broker", () => {
    const kinds = plan({ ...SHORT, seed: 7 }).map((f) => f.kind);
    expect(kinds.filter((k) => k === "lost-live-user")).toHaveLength(1);
    expect(kinds).not.toContain("emptied-broker");
  });

  it("leave a seed's other faults as they were without them", () => {
    for (const seed of [7, 514658066, 2 ** 31 - 1]) {
      for (const config of [FULL, SHORT]) {
        const without = plan({
          ...config,
          seed,
          outages: { ...config.outages, "emptied-broker": 0, "lost-live-user": 0 },
        });
        expect(plan({ ...config, seed }).filter((f) => !added.has(f.kind))).toEqual(without);
      }
    }
  });
});
