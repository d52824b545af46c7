import { describe, expect, it } from "vitest";
import { FULL, SHORT, plan } from "../../e2e/support/chaos-plan.ts";

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

  it("leave a seed's other faults as they were without them", () => {
    for (const seed of [7, 514658066]) {
      const without = plan({ ...SHORT, seed, outages: { ...SHORT.outages, "clock-step": 0 } });
      expect(plan({ ...SHORT, seed }).filter((f) => f.kind !== "clock-step")).toEqual(without);
    }
  });
});
