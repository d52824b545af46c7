// The endpoints' snapshots of the verification period: the lists (a broker's vhosts, a server's
// catalogue) that answer the verifications of every object of an endpoint, instead of a read per
// object. A verification takes the part started within the last period, or starts one that every
// verification due meanwhile joins. An object confirmed by a snapshot is due again a period after it
// started, so the objects of an endpoint fall due together and it is read about once a period,
// however many objects it holds. Times are monotonic, as the memo's are.

/** The parts read so far of one endpoint, and when each was asked for. */
type Parts<M> = { [P in keyof M]?: { startedAt: number; value: Promise<M[P]> } };

export interface Snapshot<M, P extends keyof M> {
  parts: Pick<M, P>;
  /** When the oldest of its parts was asked for: what it says holds from then on. */
  startedAt: number;
}

/**
 * The snapshots of endpoints `E`, each made of the parts of `M` (a broker's list endpoints, a server's
 * one catalogue): `keyOf` names an endpoint (a login, a pool: a new pool reads afresh), `read` reads one
 * part of it.
 */
export class PeriodSnapshots<E, M> {
  readonly #endpoints = new Map<unknown, Parts<M>>();
  readonly #keyOf: (endpoint: E) => unknown;
  readonly #read: (endpoint: E, part: keyof M) => Promise<M[keyof M]>;

  constructor(keyOf: (endpoint: E) => unknown, read: (endpoint: E, part: keyof M) => Promise<M[keyof M]>) {
    this.#keyOf = keyOf;
    this.#read = read;
  }

  /**
   * `parts` of `endpoint`, each read after `now - periodMs` and after `since` (when the endpoint was found
   * to have lost what it held): a part started before that is dropped, and a failed one is forgotten,
   * so the next verification reads again.
   */
  async read<P extends keyof M>(
    endpoint: E,
    parts: readonly P[],
    now: number,
    periodMs: number,
    since?: number,
  ): Promise<Snapshot<M, P>> {
    this.#dropBefore(now - periodMs);
    const key = this.#keyOf(endpoint);
    const held: Parts<M> = this.#endpoints.get(key) ?? {};
    for (const part of Object.keys(held) as (keyof M)[]) {
      if (since !== undefined && (held[part]?.startedAt ?? since) < since) delete held[part];
    }
    this.#endpoints.set(key, held);
    const taken = parts.map((part) => [part, this.#part(held, endpoint, part, now)] as const);
    const values = await Promise.all(taken.map(async ([part, entry]) => [part, await entry.value]));
    return {
      parts: Object.fromEntries(values) as Pick<M, P>,
      startedAt: Math.min(...taken.map(([, entry]) => entry.startedAt)),
    };
  }

  #part<P extends keyof M>(held: Parts<M>, endpoint: E, part: P, now: number) {
    const entry = held[part];
    if (entry) return entry;
    // The part read is the part asked for: `read` answers each part with its own.
    const started = { startedAt: now, value: this.#read(endpoint, part) as Promise<M[P]> };
    held[part] = started;
    started.value.catch(() => {
      if (held[part] === started) delete held[part];
    });
    return started;
  }

  /** Parts older than a period answer no verification: they go, and so does an endpoint with none left. */
  #dropBefore(oldest: number): void {
    for (const [key, held] of this.#endpoints) {
      for (const part of Object.keys(held) as (keyof M)[]) {
        if ((held[part]?.startedAt ?? oldest) <= oldest) delete held[part];
      }
      if (Object.keys(held).length === 0) this.#endpoints.delete(key);
    }
  }
}

/** A kind's check of its state against the parts of its endpoint's snapshot it needs. */
export interface SnapshotCheck<M, S, R extends { matches: boolean }> {
  parts: readonly (keyof M)[];
  compare(snapshot: M, spec: S): R;
}

/**
 * The verification step: the kind's check on the endpoint's snapshot of the period, and when that
 * snapshot started (what a match confirms holds from then on). A mismatch is the kind's to read back
 * on its own: the snapshot may be most of a period old.
 */
export async function verifyBySnapshot<E, M, S, R extends { matches: boolean }>(
  snapshots: PeriodSnapshots<E, M>,
  endpoint: E,
  check: SnapshotCheck<M, S, R>,
  spec: S,
  at: { now: number; periodMs: number; since?: number | undefined },
): Promise<{ answer: R; startedAt: number }> {
  const { parts, startedAt } = await snapshots.read(endpoint, check.parts, at.now, at.periodMs, at.since);
  return { answer: check.compare(parts as M, spec), startedAt };
}
