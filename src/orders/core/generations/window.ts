// Rotation windows (issue 47, like cert-manager's renewal windows): a cron schedule read in a time zone
// opens a window of a fixed duration, and a scheduled rotation starts only inside one. The moment a
// rotation takes is spread over the window by a hash of the order's uid and the window's start, so that
// orders created together rotate apart, and a restart computes the same moment again. Pure: every time is
// passed in; the cron library is only asked where the schedule's matches fall.
import { createHash } from "node:crypto";
import { Cron } from "croner";
import { parseDuration } from "../../../runtime/base/duration.ts";

/** spec.rotation.window, resolved: the schedule, its zone and how long each window stays open. */
export interface RotationWindow {
  /** A 5-field cron expression: minute hour day-of-month month day-of-week. */
  readonly schedule: string;
  /** An IANA time zone, e.g. Europe/Berlin. */
  readonly timeZone: string;
  readonly durationMs: number;
}

/** One window: open from `start` (included) until `end` (excluded). */
export interface OpenWindow {
  readonly start: Date;
  readonly end: Date;
}

/** The bounds of rotation.window.duration the CRD's rule enforces, checked again here. */
export const MIN_WINDOW_MS = 60_000;
export const MAX_WINDOW_MS = 24 * 3_600_000;

/** A window the order states, before its duration is parsed (the CRD's fields). */
export interface WindowFields {
  readonly schedule: string;
  readonly timeZone?: string | undefined;
  readonly duration: string;
}

/** A field of the window the CRD's rules let through but the operator cannot use, and why. */
export interface WindowProblem {
  readonly field: "schedule" | "timeZone" | "duration";
  readonly message: string;
}

// A parsed schedule per (schedule, zone): a thousand orders with one window parse it once. Bounded, as
// each distinct window a tenant writes adds one.
const compiled = new Map<string, Cron>();
const MAX_COMPILED = 256;

function cronOf(schedule: string, timeZone: string): Cron {
  const key = `${timeZone}\n${schedule}`;
  let cron = compiled.get(key);
  if (!cron) {
    // No function: the library schedules nothing, it only computes matches.
    cron = new Cron(schedule, { timezone: timeZone, mode: "5-part" });
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    compiled.set(key, cron);
  }
  return cron;
}

// Any 5-field schedule repeats within 28 years, so one that has no match after this never opens.
const EVER = new Date(Date.UTC(2000, 0, 1));

/**
 * What in a window the CRD's rules cannot refuse: a time zone the runtime does not know, a schedule the
 * cron library refuses (minute 61, a name that is no month) or that never matches (30 February), a
 * duration out of bounds (an order written past the CRD). Empty when the window is usable.
 */
export function windowProblems(fields: WindowFields): WindowProblem[] {
  // Every pass parses its order: the verdict on a window is kept (bounded like the parsed schedules).
  const key = JSON.stringify([fields.schedule, fields.timeZone, fields.duration]);
  let problems = verdicts.get(key);
  if (!problems) {
    problems = checkWindow(fields);
    if (verdicts.size >= MAX_COMPILED) verdicts.clear();
    verdicts.set(key, problems);
  }
  return [...problems];
}

const verdicts = new Map<string, WindowProblem[]>();

function checkWindow(fields: WindowFields): WindowProblem[] {
  const problems: WindowProblem[] = [];
  const timeZone = fields.timeZone ?? "UTC";
  let zoneKnown = true;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
  } catch {
    zoneKnown = false;
    problems.push({ field: "timeZone", message: `unknown time zone ${JSON.stringify(timeZone)}` });
  }
  try {
    const cron = new Cron(fields.schedule, { timezone: zoneKnown ? timeZone : "UTC", mode: "5-part" });
    if (cron.nextRun(EVER) === null)
      problems.push({ field: "schedule", message: `${JSON.stringify(fields.schedule)} never matches` });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    problems.push({
      field: "schedule",
      message: `${JSON.stringify(fields.schedule)} is not a cron schedule: ${why}`,
    });
  }
  const ms = parseDuration(fields.duration);
  if (ms === undefined || ms < MIN_WINDOW_MS || ms > MAX_WINDOW_MS)
    problems.push({
      field: "duration",
      message: `${JSON.stringify(fields.duration)} is not between 1m and 24h`,
    });
  return problems;
}

/**
 * The first window that closes after `at`: the one open at `at` (of several that overlap, the one that
 * opened first), else the next one to open. Undefined when the schedule never opens again.
 */
export function windowAt(window: RotationWindow, at: Date): OpenWindow | undefined {
  // A window [start, start + duration) is open at `at` when at - duration < start <= at: the first match
  // after at - duration is the first window that is still open at `at` or opens later.
  const start = cronOf(window.schedule, window.timeZone).nextRun(new Date(at.getTime() - window.durationMs));
  return start ? { start, end: new Date(start.getTime() + window.durationMs) } : undefined;
}

/** A fraction in [0, 1) from the order's seed (its uid) and a window's start: stable, and apart per order. */
export function spreadFraction(seed: string, start: Date): number {
  const digest = createHash("sha256").update(`${seed}\n${start.toISOString()}`).digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/** The longest stretch at a window's end that no moment falls in. */
export const MAX_WINDOW_TAIL_MS = 5 * 60_000;

/**
 * The stretch at the end of a window left free of moments: a tenth of it, at most MAX_WINDOW_TAIL_MS.
 * A rotation's switch follows its start by the successor's User, Permission and login check: seconds,
 * and up to a minute in a rotation storm on the benchmark's machine (docs/performance.md). The tail
 * leaves it room inside the window.
 */
export function windowTail(durationMs: number): number {
  return Math.min(Math.floor(durationMs / 10), MAX_WINDOW_TAIL_MS);
}

/**
 * The moment at `fraction` of [from, window.end - tail), in whole seconds (as the status writes times);
 * `from` itself when it falls in the tail.
 */
function momentIn(window: OpenWindow, from: Date, fraction: number): Date {
  const first = Math.ceil(from.getTime() / 1000) * 1000;
  const last = window.end.getTime() - windowTail(window.end.getTime() - window.start.getTime());
  const span = last - first;
  if (span <= 0) return from;
  return new Date(first + Math.floor((fraction * span) / 1000) * 1000);
}

/**
 * When a scheduled rotation due at `due` starts: at the order's fraction of the first window open at or
 * after `due` (of the remainder [due, end) when `due` falls inside one), short of the window's tail. With
 * `now` (when the pass was queued), a moment whose window closed before `now` (the operator was down
 * through its end, a grace period ran past it) is missed: the rotation takes its fraction of the window
 * open at `now` or the next one, so it never starts outside a window. Undefined when the schedule never
 * opens again.
 */
export function windowedMoment(
  window: RotationWindow,
  seed: string,
  due: Date,
  now?: Date,
): Date | undefined {
  let open = windowAt(window, due);
  if (!open) return undefined;
  if (now !== undefined && now.getTime() >= open.end.getTime()) {
    open = windowAt(window, now);
    if (!open) return undefined;
  }
  const from = open.start.getTime() > due.getTime() ? open.start : due;
  return momentIn(open, from, spreadFraction(seed, open.start));
}
