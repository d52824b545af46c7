// The spread phase's arithmetic: the cron that opens once at T0, and how moments fall on the window's
// minutes against the even share with the binomial standard deviation.
import { Cron } from "croner";
import { describe, expect, it } from "vitest";
import { windowedMoment } from "../../src/orders/core/generations/window.ts";
import { minuteSpread, onceAt } from "../../scripts/bench/spread.ts";

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

  it("finds 1,000 orders' moments in a 2-minute window within 10 % of even, with sd about 16", () => {
    const window = { schedule: onceAt(new Date(start)), timeZone: "UTC", durationMs: 2 * MINUTE };
    const moments = Array.from(
      { length: 1000 },
      (_, i) => windowedMoment(window, `uid-${i}`, new Date(start - MINUTE))?.getTime() ?? NaN,
    );
    const s = minuteSpread(moments, start, 2, 1000);
    expect(s.inside).toBe(1000);
    expect(s.sd).toBeCloseTo(15.8, 1);
    expect(s.largestDeviationPercent).toBeLessThan(10);
  });
});
