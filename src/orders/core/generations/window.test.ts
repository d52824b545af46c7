import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  MAX_WINDOW_TAIL_MS,
  spreadFraction,
  windowAt,
  windowedMoment,
  windowProblems,
  windowTail,
  type OpenWindow,
  type RotationWindow,
} from "./window.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const t = (iso: string) => new Date(iso);
const nightly: RotationWindow = { schedule: "0 2 * * *", timeZone: "UTC", durationMs: HOUR };
const UID = "5b0e9a0c-1d2e-4f3a-8b4c-5d6e7f8a9b0c";

/** A deterministic uid per index, shaped like the API server's. */
const uidOf = (i: number) => {
  const h = createHash("sha256").update(String(i)).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
};

function expectInside(moment: Date | undefined, window: OpenWindow, from = window.start) {
  expect(moment).toBeDefined();
  const ms = (moment as Date).getTime();
  expect(ms).toBeGreaterThanOrEqual(from.getTime());
  // Short of the window's tail, unless the rotation fell due inside it.
  const tail = windowTail(window.end.getTime() - window.start.getTime());
  expect(ms).toBeLessThan(Math.max(window.end.getTime() - tail, from.getTime() + 1));
  expect(ms % 1000).toBe(0);
}

describe("windowAt", () => {
  it("is the window open at the time, or the next one to open", () => {
    const tonight = { start: t("2030-01-10T02:00:00Z"), end: t("2030-01-10T03:00:00Z") };
    expect(windowAt(nightly, t("2030-01-10T00:30:00Z"))).toEqual(tonight);
    expect(windowAt(nightly, t("2030-01-10T02:00:00Z"))).toEqual(tonight);
    expect(windowAt(nightly, t("2030-01-10T02:59:59.999Z"))).toEqual(tonight);
    // Closed at its end: the next day's.
    expect(windowAt(nightly, t("2030-01-10T03:00:00Z"))).toEqual({
      start: t("2030-01-11T02:00:00Z"),
      end: t("2030-01-11T03:00:00Z"),
    });
  });

  it("opens at the schedule's time on the zone's clock across daylight saving time (Europe/Berlin)", () => {
    const berlin: RotationWindow = { schedule: "0 1 * * *", timeZone: "Europe/Berlin", durationMs: 3 * HOUR };
    // 01:00 CET is 00:00Z; on 29 March 2026 the clocks go to CEST, and 01:00 CEST is 23:00Z the day before.
    expect(windowAt(berlin, t("2026-03-28T12:00:00Z"))?.start).toEqual(t("2026-03-29T00:00:00Z"));
    expect(windowAt(berlin, t("2026-03-29T12:00:00Z"))?.start).toEqual(t("2026-03-29T23:00:00Z"));
    // The duration is elapsed time: three hours after 00:00Z, 05:00 on the CEST clock.
    expect(windowAt(berlin, t("2026-03-29T01:00:00Z"))?.end).toEqual(t("2026-03-29T03:00:00Z"));
    // Back to CET on 25 October 2026.
    expect(windowAt(berlin, t("2026-10-24T12:00:00Z"))?.start).toEqual(t("2026-10-24T23:00:00Z"));
    expect(windowAt(berlin, t("2026-10-25T12:00:00Z"))?.start).toEqual(t("2026-10-26T00:00:00Z"));
  });

  it("takes a time the spring-forward gap skips at the gap's end", () => {
    const gap: RotationWindow = { schedule: "30 2 * * *", timeZone: "Europe/Berlin", durationMs: HOUR };
    // 02:30 does not exist on 29 March 2026 in Berlin: the window opens at 03:00 CEST (01:00Z).
    expect(windowAt(gap, t("2026-03-28T12:00:00Z"))?.start).toEqual(t("2026-03-29T01:00:00Z"));
  });

  it("reads month and weekday names, and skips to the day the schedule names", () => {
    const weekend: RotationWindow = { schedule: "0 22 * * sat,SUN", timeZone: "UTC", durationMs: HOUR };
    // 2030-01-10 is a Thursday.
    expect(windowAt(weekend, t("2030-01-10T12:00:00Z"))?.start).toEqual(t("2030-01-12T22:00:00Z"));
    const july: RotationWindow = { schedule: "0 0 1 Jul *", timeZone: "UTC", durationMs: HOUR };
    expect(windowAt(july, t("2030-01-10T12:00:00Z"))?.start).toEqual(t("2030-07-01T00:00:00Z"));
  });

  it("takes of overlapping windows the one that closes first", () => {
    const everyMinute: RotationWindow = { schedule: "* * * * *", timeZone: "UTC", durationMs: HOUR };
    expect(windowAt(everyMinute, t("2030-01-10T12:00:30Z"))).toEqual({
      start: t("2030-01-10T11:01:00Z"),
      end: t("2030-01-10T12:01:00Z"),
    });
  });
});

describe("windowedMoment", () => {
  it("holds a rotation due before a window until it opens, and starts it inside", () => {
    const due = t("2030-01-10T00:30:00Z");
    const moment = windowedMoment(nightly, UID, due);
    expectInside(moment, { start: t("2030-01-10T02:00:00Z"), end: t("2030-01-10T03:00:00Z") });
  });

  it("takes the remainder of the window a rotation falls due in", () => {
    const due = t("2030-01-10T02:40:00.250Z");
    const moment = windowedMoment(nightly, UID, due);
    expectInside(moment, { start: t("2030-01-10T02:00:00Z"), end: t("2030-01-10T03:00:00Z") }, due);
  });

  it("waits for the next day when the day's window has closed", () => {
    const moment = windowedMoment(nightly, UID, t("2030-01-10T03:00:00Z"));
    expectInside(moment, { start: t("2030-01-11T02:00:00Z"), end: t("2030-01-11T03:00:00Z") });
  });

  it("is the same moment on every call (a restart does not move it), whatever now is before it", () => {
    const due = t("2030-01-10T00:30:00Z");
    const moment = windowedMoment(nightly, UID, due);
    for (const now of ["2030-01-10T00:30:00Z", "2030-01-10T01:59:00Z", "2030-01-10T02:00:00Z"])
      expect(windowedMoment(nightly, UID, due, t(now))).toEqual(moment);
    // Once the moment has passed, it stays until its window closes: the pass that comes at it rotates.
    expect(windowedMoment(nightly, UID, due, moment)).toEqual(moment);
    expect(windowedMoment(nightly, UID, due, t("2030-01-10T02:59:59Z"))).toEqual(moment);
    // Any due time before the window gives the same moment in it.
    expect(windowedMoment(nightly, UID, t("2030-01-09T05:00:00Z"))).toEqual(moment);
  });

  it("moves a moment whose window closed unused to the next window, never outside one", () => {
    const due = t("2030-01-10T00:30:00Z");
    const tomorrow = { start: t("2030-01-11T02:00:00Z"), end: t("2030-01-11T03:00:00Z") };
    const late = windowedMoment(nightly, UID, due, t("2030-01-10T03:00:00Z"));
    expectInside(late, tomorrow);
    // Stable while it waits, and the same when the operator comes back inside that window.
    expect(windowedMoment(nightly, UID, due, t("2030-01-10T18:00:00Z"))).toEqual(late);
    expect(windowedMoment(nightly, UID, due, t("2030-01-11T02:00:01Z"))).toEqual(late);
  });

  it("gives two orders different moments, each its own in every window", () => {
    const due = t("2030-01-10T00:30:00Z");
    const a = windowedMoment(nightly, UID, due);
    const b = windowedMoment(nightly, uidOf(1), due);
    expect(a).not.toEqual(b);
    expect(spreadFraction(UID, t("2030-01-10T02:00:00Z"))).toBe(
      spreadFraction(UID, t("2030-01-10T02:00:00Z")),
    );
  });

  it("leaves the window's last tenth free of moments, at most its last 5 minutes", () => {
    expect(windowTail(MINUTE)).toBe(6_000);
    expect(windowTail(10 * MINUTE)).toBe(MINUTE);
    expect(windowTail(24 * HOUR)).toBe(MAX_WINDOW_TAIL_MS);
    // An hour's tenth is 6 minutes: the latest moment is 5 minutes before the window closes.
    const moments = Array.from({ length: 2000 }, (_, i) =>
      windowedMoment(nightly, uidOf(i), t("2030-01-10T01:00:00Z")),
    );
    const latest = Math.max(...moments.map((m) => m?.getTime() ?? NaN));
    expect(latest).toBeLessThan(t("2030-01-10T02:55:00Z").getTime());
    expect(latest).toBeGreaterThan(t("2030-01-10T02:54:00Z").getTime());
  });

  it("starts a rotation that falls due inside the tail when it falls due", () => {
    const due = t("2030-01-10T02:57:00Z");
    expect(windowedMoment(nightly, UID, due)).toEqual(due);
  });

  it("spreads 1,000 orders due together evenly over the window short of its tail", () => {
    const tenMinutes: RotationWindow = { schedule: "0 2 * * *", timeZone: "UTC", durationMs: 10 * MINUTE };
    const window = { start: t("2030-01-10T02:00:00Z"), end: t("2030-01-10T02:10:00Z") };
    const due = t("2030-01-10T01:59:00Z");
    const perMinute = new Array<number>(10).fill(0);
    const moments = new Set<number>();
    for (let i = 0; i < 1000; i++) {
      const moment = windowedMoment(tenMinutes, uidOf(i), due);
      expectInside(moment, window);
      const ms = (moment as Date).getTime();
      moments.add(ms);
      perMinute[Math.floor((ms - window.start.getTime()) / MINUTE)]! += 1;
    }
    // 111 a minute expected over the first nine; a binomial's standard deviation is about 10.
    for (const count of perMinute.slice(0, 9)) expect(Math.abs(count - 111)).toBeLessThanOrEqual(33);
    expect(perMinute[9]).toBe(0);
    // 540 possible seconds: most orders share a second with few others.
    expect(moments.size).toBeGreaterThan(420);
  });

  it("is undefined for a schedule that never opens again", () => {
    const never: RotationWindow = { schedule: "0 0 30 2 *", timeZone: "UTC", durationMs: HOUR };
    expect(windowedMoment(never, UID, t("2030-01-10T00:00:00Z"))).toBeUndefined();
  });
});

describe("windowProblems", () => {
  it("takes a usable window", () => {
    expect(
      windowProblems({ schedule: "0 2 * * mon-fri", timeZone: "Europe/Berlin", duration: "2h" }),
    ).toEqual([]);
    expect(windowProblems({ schedule: "*/3 * * * *", duration: "1m" })).toEqual([]);
  });

  it.each([
    [{ schedule: "0 2 * * *", timeZone: "Mars/Olympus", duration: "1h" }, "timeZone", /unknown time zone/],
    [{ schedule: "61 2 * * *", timeZone: "UTC", duration: "1h" }, "schedule", /not a cron schedule/],
    [{ schedule: "0 2 * Foo *", timeZone: "UTC", duration: "1h" }, "schedule", /not a cron schedule/],
    [{ schedule: "0 2 * * * *", timeZone: "UTC", duration: "1h" }, "schedule", /not a cron schedule/],
    [{ schedule: "0 0 30 2 *", timeZone: "UTC", duration: "1h" }, "schedule", /never matches/],
    [{ schedule: "0 2 * * *", timeZone: "UTC", duration: "30s" }, "duration", /between 1m and 24h/],
    [{ schedule: "0 2 * * *", timeZone: "UTC", duration: "25h" }, "duration", /between 1m and 24h/],
  ])("refuses %j", (fields, field, message) => {
    const problems = windowProblems(fields);
    expect(problems.map((p) => p.field)).toEqual([field]);
    expect(problems[0]?.message).toMatch(message);
  });
});
