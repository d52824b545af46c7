// The work queue's waiting keys, filed by lane (the endpoint an object's pass talks to: a broker, a
// database server). A lane holds at most `budget` passes at once, and a free worker goes to the lanes
// in turn, so that a slow or hung endpoint holds only its own lane's share of the workers and the
// others' keys keep moving. Without lanes every key is in the one lane "" with no budget.

export interface LaneState {
  lane: string;
  /** Keys waiting in the lane, oldest first. */
  waiting: string[];
  /** Passes of the lane that workers hold now. */
  running: number;
}

export class Lanes {
  /** Waiting keys per lane; the map's order is the turn order (a lane served goes to the back). */
  private readonly waiting = new Map<string, string[]>();
  private readonly running = new Map<string, number>();
  private size = 0;
  readonly budget: number;

  constructor(budget = Infinity) {
    if (!(budget >= 1)) throw new Error("a lane's budget must be at least 1");
    this.budget = budget;
  }

  push(lane: string, key: string): void {
    const keys = this.waiting.get(lane);
    if (keys) keys.push(key);
    else this.waiting.set(lane, [key]);
    this.size++;
  }

  /** The next key of the first lane in turn that has one and is under its budget; the lane moves back. */
  take(): { key: string; lane: string } | undefined {
    for (const [lane, keys] of this.waiting) {
      if ((this.running.get(lane) ?? 0) >= this.budget) continue;
      const key = keys.shift();
      if (key === undefined) continue;
      this.waiting.delete(lane);
      if (keys.length > 0) this.waiting.set(lane, keys);
      this.size--;
      this.running.set(lane, (this.running.get(lane) ?? 0) + 1);
      return { key, lane };
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
    return [...lanes].map((lane) => ({
      lane,
      waiting: [...(this.waiting.get(lane) ?? [])],
      running: this.running.get(lane) ?? 0,
    }));
  }
}
