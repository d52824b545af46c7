// A rotation window of the benchmark and how moments fall on it: the schedule that opens one window at
// a given minute, and the count of moments per minute of the window against each minute's share.
import { range } from "./concurrency.ts";

const MINUTE = 60_000;

/** The cron schedule that opens once (a minute of one day of the year) at `t`, read in UTC. */
export function onceAt(t: Date): string {
  return `${t.getUTCMinutes()} ${t.getUTCHours()} ${t.getUTCDate()} ${t.getUTCMonth() + 1} *`;
}

/** How a set of moments falls on the minutes of a window, against the even share. */
export interface MinuteSpread {
  /** N/W': the count a whole minute would have if the moments were spread exactly evenly over W' minutes, the window short of its tail. */
  even: number;
  /** sqrt(N·p·(1−p)), p = 1/W': the standard deviation of a whole minute's count for independent uniform moments. */
  sd: number;
  /** Per minute of the window, from its start: how many moments fell in it, and by how much (%) off its share. */
  perMinute: { start: string; count: number; deviationPercent: number }[];
  /** The largest |deviation| of a minute from its share, in % of it and in its standard deviations. */
  largestDeviationPercent: number;
  largestDeviationSds: number;
  /** Moments inside the window, before it opened, and at or after it closed. */
  inside: number;
  before: number;
  after: number;
  /** The most moments in one second. */
  busiestSecond: number;
}

/**
 * `times` (ms) on the W minutes from `start`; `n` is the number of orders the even share divides, over
 * the window short of its last `tailMs` (in which no moment falls: generations/window.ts): a minute's
 * share is n times the part of that span it covers.
 */
export function minuteSpread(
  times: readonly number[],
  start: number,
  minutes: number,
  n: number,
  tailMs = 0,
): MinuteSpread {
  const spanMs = minutes * MINUTE - tailMs;
  const shareOf = (i: number) => Math.max(0, Math.min((i + 1) * MINUTE, spanMs) - i * MINUTE) / spanMs;
  const sdOf = (p: number) => Math.sqrt(n * p * (1 - p));
  const counts = range(minutes).map(() => 0);
  let before = 0;
  let after = 0;
  const perSecond = new Map<number, number>();
  for (const t of times) {
    if (!Number.isFinite(t)) continue;
    const second = Math.floor(t / 1000);
    perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    const minute = Math.floor((t - start) / MINUTE);
    if (minute < 0) before++;
    else if (minute >= minutes) after++;
    else counts[minute] = (counts[minute] ?? 0) + 1;
  }
  const perMinute = counts.map((count, i) => {
    const expected = n * shareOf(i);
    return {
      start: new Date(start + i * MINUTE).toISOString(),
      count,
      deviationPercent: expected > 0 ? ((count - expected) / expected) * 100 : 0,
    };
  });
  const shared = counts.map((count, i) => ({ count, p: shareOf(i) })).filter((m) => m.p > 0);
  const off = (m: { count: number; p: number }) => Math.abs(m.count - n * m.p);
  return {
    even: n * Math.min(1, MINUTE / spanMs),
    sd: sdOf(Math.min(1, MINUTE / spanMs)),
    perMinute,
    largestDeviationPercent: Math.max(0, ...shared.map((m) => (n > 0 ? (off(m) / (n * m.p)) * 100 : 0))),
    largestDeviationSds: Math.max(0, ...shared.map((m) => (sdOf(m.p) > 0 ? off(m) / sdOf(m.p) : 0))),
    inside: counts.reduce((a, b) => a + b, 0),
    before,
    after,
    busiestSecond: Math.max(0, ...perSecond.values()),
  };
}
