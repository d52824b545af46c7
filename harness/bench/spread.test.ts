// The spread phase's arithmetic: the cron that opens once at T0, how moments fall on the window's minutes
// against the even share with the binomial standard deviation, and the interval, lead and grace that keep
// the window's load a real one's.
import { Cron } from "croner";
import { describe, expect, it } from "vitest";
import { windowedMoment, windowTail } from "../../src/orders/core/generations/window.ts";
import { parseDuration } from "../../src/runtime/base/duration.ts";
import { defaultSpreadGrace, defaultSpreadLeadMinutes, spreadIntervalMinutes } from "./spread.ts";
import { minuteSpread, onceAt } from "./window-spread.ts";

const MINUTE = 60_000;

describe("onceAt", () => {
  it("opens at T0 and not again within the year", () => {
    const t0 = new Date("2026-12-07T10:42:00Z");
    const schedule = onceAt(t0);
    expect(schedule).toBe("42 10 7 12 *");
    const cron = new Cron(schedule, { timezone: "UTC", mode: "5-part" });
    expect(cron.nextRun(new Date(t0.getTime() - 1000))?.toISOString()).toBe(t0.toISOString());
    expect(cron.nextRun(t0)?.toISOString()).toBe("2027-12-07T10:42:00.000Z");
  });
});

describe("minuteSpread", () => {
  const start = Date.parse("2026-12-07T10:42:00Z");

  it("counts per minute, outside, the deviation in % and in sd, and the busiest second", () => {
    const times = [start - 1000, start, start + 500, start + 59_999, start + MINUTE, start + 2 * MINUTE, NaN];
    const s = minuteSpread(times, start, 2, 4);
    expect(s.even).toBe(2);
    expect(s.sd).toBeCloseTo(1, 10);
    expect(s.perMinute.map((m) => [m.start, m.count])).toEqual([
      ["2026-12-07T10:42:00.000Z", 3],
      ["2026-12-07T10:43:00.000Z", 1],
    ]);
    expect(s.perMinute.map((m) => m.deviationPercent)).toEqual([50, -50]);
    expect(s.largestDeviationPercent).toBe(50);
    expect(s.largestDeviationSds).toBeCloseTo(1, 10);
    expect([s.inside, s.before, s.after, s.busiestSecond]).toEqual([4, 1, 1, 2]);
  });

  it("finds 1,000 orders' moments in a 2-minute window within 10 % of their shares, with sd about 16", () => {
    const window = { schedule: onceAt(new Date(start)), timeZone: "UTC", durationMs: 2 * MINUTE };
    const moments = Array.from(
      { length: 1000 },
      (_, i) => windowedMoment(window, `uid-${i}`, new Date(start - MINUTE))?.getTime() ?? NaN,
    );
    // The last 12 s are the window's tail: the first minute's share is 60/108, the second's 48/108.
    const s = minuteSpread(moments, start, 2, 1000, windowTail(2 * MINUTE));
    expect(s.inside).toBe(1000);
    expect(s.even).toBeCloseTo(555.6, 1);
    expect(s.sd).toBeCloseTo(15.7, 1);
    expect(s.largestDeviationPercent).toBeLessThan(10);
  });
});

describe("the spread's interval, lead and grace", () => {
  it.each([1, 2, 5, 10])(
    "with a %i-minute window: one rotation each in it, due before it, swept after it",
    (w) => {
      const interval = spreadIntervalMinutes(w) * MINUTE;
      const lead = defaultSpreadLeadMinutes(w) * MINUTE;
      const grace = parseDuration(defaultSpreadGrace(w)) ?? NaN;
      // A rotation at the window's start falls due again after the window and the phase's 30 s watch.
      expect(interval).toBeGreaterThan(w * MINUTE + 30_000);
      // Orders live within 100 s of the first apply fall due 5 s before T0 (T0 at least the lead after it).
      expect(100_000 + interval + 5_000).toBeLessThan(lead);
      // A switch at the window's start sweeps its predecessor after the window closed.
      expect(grace).toBeGreaterThan(w * MINUTE);
    },
  );
});
