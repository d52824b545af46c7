import type { Logger } from "pino";
import type { LaneState } from "./lanes.ts";

// A lane is slow when its endpoint holds a pass for longer than expected while keys wait behind it (a
// hung broker: connections accepted, no answer). The requests waiting there are told why, once.

// A lane can be slow with thousands of requests behind it (a restart among 30,000 objects of one busy
// broker): an Event for each flooded the API server until the leader lost its Lease. The first requests
// of a backlog say why they wait; the rest wait as they do.
const TOLD_PER_BACKLOG = 20;
// A hung endpoint's lane empties and fills again at each round of retries (its passes fail at their
// deadline and wait out their retry): it is forgotten, and its requests told again, only once it has been
// idle this long.
const FORGET_IDLE_LANE_MS = 5 * 60_000;

/** A lane whose oldest running pass has taken `slowForMs` while keys wait behind it. */
export interface SlowLane {
  lane: string;
  running: number;
  waiting: string[];
  slowForMs: number;
}

/**
 * The lanes that are slow at `now`: keys wait in them, and their oldest running pass started `afterMs`
 * or longer ago (a hung endpoint: connections accepted, no answer). All times monotonic.
 */
export function slowLanes(
  lanes: readonly (LaneState & { runningSince: number | undefined })[],
  now: number,
  afterMs: number,
): SlowLane[] {
  return lanes.flatMap(({ lane, running, waiting, runningSince }) =>
    waiting.length > 0 && runningSince !== undefined && now - runningSince >= afterMs
      ? [{ lane, running, waiting, slowForMs: now - runningSince }]
      : [],
  );
}

export interface SlowLaneNoticeOptions {
  controller: string;
  slowAfterMs: number;
  /** Told about the waiting key `key` of a slow lane: why it waits. */
  tell: (key: string, lane: SlowLane) => void;
  log: Logger;
}

/** What a controller has told the requests waiting in its slow lanes, so that each is told once. */
export class SlowLaneNotices {
  private readonly options: SlowLaneNoticeOptions;
  /** The keys told why they wait, per lane, and when the lane last had keys waiting or running. */
  private readonly told = new Map<string, { keys: Set<string>; busyAt: number }>();

  constructor(options: SlowLaneNoticeOptions) {
    this.options = options;
  }

  /**
   * Tells the keys waiting in a slow lane why, once while the lane stays busy: a hung endpoint's lane
   * is slow again at each round of passes that wait out their deadline, and a key that waits through
   * several rounds is told once. A lane idle for FORGET_IDLE_LANE_MS forgets. Only the first
   * TOLD_PER_BACKLOG waiting keys are told (the log line gives the whole backlog).
   */
  check(states: readonly (LaneState & { runningSince: number | undefined })[], now: number): void {
    const slow = slowLanes(states, now, this.options.slowAfterMs);
    for (const { lane } of states) {
      const told = this.told.get(lane);
      if (told) told.busyAt = now;
    }
    for (const [lane, told] of this.told)
      if (now - told.busyAt >= FORGET_IDLE_LANE_MS) this.told.delete(lane);
    for (const spell of slow) {
      let told = this.told.get(spell.lane)?.keys;
      if (!told) {
        told = new Set();
        this.told.set(spell.lane, { keys: told, busyAt: now });
        this.options.log.warn(
          {
            controller: this.options.controller,
            lane: spell.lane,
            running: spell.running,
            waiting: spell.waiting.length,
          },
          "a lane is slow: its endpoint has held a pass for longer than expected; requests of other lanes go on",
        );
      }
      for (const key of spell.waiting) {
        if (told.size >= TOLD_PER_BACKLOG) break;
        if (told.has(key)) continue;
        told.add(key);
        this.options.tell(key, spell);
      }
    }
  }
}
