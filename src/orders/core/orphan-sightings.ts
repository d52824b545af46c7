// Where the removal of an absent order's leftovers (orphans.ts) keeps what it saw: the first sighting of
// each order's leftovers, per process, and how long they wait before they go.
import type { OrderKey } from "./naming.ts";

/** When each absent order's leftovers were first seen, per process: the delay restarts with the process. */
export class OrphanSightings {
  private readonly seen = new Map<string, number>();

  /** The first sighting of `key`'s leftovers, now if this is the first. */
  since(key: OrderKey, now: number): number {
    const id = `${key.cluster}/${key.namespace}/${key.name}`;
    const first = this.seen.get(id) ?? now;
    this.seen.set(id, first);
    return first;
  }

  forget(key: OrderKey): void {
    this.seen.delete(`${key.cluster}/${key.namespace}/${key.name}`);
  }
}

/** Settings of the reaper: how long leftovers wait, and where their first sightings are kept. */
export interface OrphanReaping {
  delayMs: number;
  sightings: OrphanSightings;
}
