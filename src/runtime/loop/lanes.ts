// The work queue's waiting keys, filed by lane (the endpoint an object's pass talks to: a broker, a
// database server). A lane holds at most `budget` passes at once, and a free worker goes to the lanes
// in turn, so that a slow or hung endpoint holds only its own lane's share of the workers and the
// others' keys keep moving. Without lanes every key is in the one lane "" with no budget.
//
// Within a lane, work an object needs now (never converged, spec changed, being deleted) goes before a
// routine check of a converged one (a restart's or a resync's), so that an order created during a
// restart among thousands of objects is not queued behind all of them. Once the oldest routine key has
// waited `ageFloorMs`, the two take turns, so that neither a stream of urgent work starves the routine
// checks nor a restart's aged checks the urgent work.

/** How soon an object's pass is needed: "urgent" for work it needs, "routine" for a check of a converged one. */
export type Rank = "urgent" | "routine";

export interface LaneState {
  lane: string;
  /** Keys waiting in the lane, urgent ones first, each oldest first. */
  waiting: string[];
  /** Passes of the lane that workers hold now. */
  running: number;
}

interface Waiting {
  urgent: { key: string; at: number }[];
  routine: { key: string; at: number }[];
  /** Whether the lane's last key handed out was urgent: aged routine keys take turns with urgent ones. */
  lastUrgent: boolean;
}

export class Lanes {
  /** Waiting keys per lane; the map's order is the turn order (a lane served goes to the back). */
  private readonly waiting = new Map<string, Waiting>();
  private readonly running = new Map<string, number>();
  private size = 0;
  readonly budget: number;
  private readonly ageFloorMs: number;

  constructor(budget = Infinity, ageFloorMs = Infinity) {
    if (!(budget >= 1)) throw new Error("a lane's budget must be at least 1");
    this.budget = budget;
    this.ageFloorMs = ageFloorMs;
  }

  /** Files `key` in `lane`; `at` is the monotonic time it was queued (the age floor counts from it). */
  push(lane: string, key: string, rank: Rank = "urgent", at = 0): void {
    let keys = this.waiting.get(lane);
    if (!keys) this.waiting.set(lane, (keys = { urgent: [], routine: [], lastUrgent: false }));
    keys[rank].push({ key, at });
    this.size++;
  }

  /**
   * The next key of the first lane in turn that has one and is under its budget (urgent first; a
   * routine one every other time once the oldest is past the age floor at `now`); the lane moves back.
   * A routine key is handed out only if `routineMayStart` says so (precedence.ts), asked at most once
   * and only when a routine key would go.
   */
  take(now = 0, routineMayStart = () => true): { key: string; lane: string; rank: Rank } | undefined {
    let allowed: boolean | undefined;
    const routine = () => (allowed ??= routineMayStart());
    for (const [lane, keys] of this.waiting) {
      if ((this.running.get(lane) ?? 0) >= this.budget) continue;
      const oldest = keys.routine[0];
      const turn = keys.lastUrgent && oldest !== undefined && now - oldest.at >= this.ageFloorMs && routine();
      const urgent = turn ? undefined : keys.urgent.shift();
      const next = urgent ?? (oldest !== undefined && routine() ? keys.routine.shift() : undefined);
      if (next === undefined) continue;
      keys.lastUrgent = urgent !== undefined;
      this.waiting.delete(lane);
      if (keys.urgent.length + keys.routine.length > 0) this.waiting.set(lane, keys);
      this.size--;
      this.running.set(lane, (this.running.get(lane) ?? 0) + 1);
      return { key: next.key, lane, rank: urgent ? "urgent" : "routine" };
    }
    return undefined;
  }

  /** A pass of `lane` ended. */
  release(lane: string): void {
    const running = (this.running.get(lane) ?? 0) - 1;
    if (running > 0) this.running.set(lane, running);
    else this.running.delete(lane);
  }

  /** Drops every waiting key (the passes running are still counted until released). */
  clear(): void {
    this.waiting.clear();
    this.size = 0;
  }

  len(): number {
    return this.size;
  }

  /** The lanes with keys waiting or passes running. */
  states(): LaneState[] {
    const lanes = new Set([...this.waiting.keys(), ...this.running.keys()]);
    return [...lanes].map((lane) => {
      const keys = this.waiting.get(lane);
      return {
        lane,
        waiting: [...(keys?.urgent ?? []), ...(keys?.routine ?? [])].map((w) => w.key),
        running: this.running.get(lane) ?? 0,
      };
    });
  }
}
