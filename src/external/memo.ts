// In-memory bookkeeping of the reconcilers of resources outside Kubernetes (the topology and the SQL
// controllers): which desired state was last applied to the backend (so an unchanged object costs no
// request until its verification is due), how often in a row the backend refused an object (its
// backoff), and which objects were already reported as not served (so that is logged once, not every
// pass), and when an endpoint was found to have lost what it held (restarted empty).

export interface Applied {
  /** uid, generation and the resourceVersion of the Secret the state was read from. */
  version: string;
  /** Keyed hash of the desired state and the backend it was applied to. */
  hash: string;
  /** The endpoint the state was applied to (a broker login, a server), as its lane and listings name it. */
  endpoint: string;
  /** When the backend last confirmed the state (declared or read back), on the monotonic clock. */
  verifiedAt: number;
  /** What the backend said it holds (a Ready message), written again if the status write was lost. */
  detail?: string | undefined;
}

/** Applied states and refusals by object key (`kind/namespace/name`); entries go when their object does. */
export class AppliedMemo {
  readonly #entries = new Map<string, Applied>();
  readonly #refusals = new Map<string, number>();
  readonly #lostAt = new Map<string, number>();

  get(key: string): Applied | undefined {
    return this.#entries.get(key);
  }

  /** The backend took the state: the refusals in a row end. */
  set(key: string, applied: Applied): void {
    this.#entries.set(key, applied);
    this.#refusals.delete(key);
  }

  /** The backend refused the object once more: nothing is applied; the refusals in a row, this one included. */
  refused(key: string): number {
    this.#entries.delete(key);
    const count = (this.#refusals.get(key) ?? 0) + 1;
    this.#refusals.set(key, count);
    return count;
  }

  forget(key: string): void {
    this.#entries.delete(key);
    this.#refusals.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The endpoint was found to have lost what it held at `at` (monotonic): no entry confirmed before
   * then vouches for its object any more. The keys of its entries, whose objects must be looked at now.
   */
  lost(endpoint: string, at: number): string[] {
    this.#lostAt.set(endpoint, at);
    return [...this.#entries].filter(([, applied]) => applied.endpoint === endpoint).map(([key]) => key);
  }

  /** When the endpoint was last found to have lost what it held. */
  lostAt(endpoint: string): number | undefined {
    return this.#lostAt.get(endpoint);
  }

  /** The endpoints some entry was applied to. */
  endpoints(): Set<string> {
    return new Set([...this.#entries.values()].map((applied) => applied.endpoint));
  }
}

/**
 * The entry vouches for its object at `now`: confirmed within the period, and not before its endpoint
 * was last found to have lost what it held.
 */
export function vouches(
  applied: Applied,
  lostAt: number | undefined,
  now: number,
  periodMs: number,
): boolean {
  return now - applied.verifiedAt < periodMs && (lostAt === undefined || applied.verifiedAt >= lostAt);
}

/**
 * An object the entry vouched for is missing at its endpoint: news that the endpoint lost what it held,
 * unless it was confirmed before the last such loss (then every object of the endpoint is being looked
 * at already, and one more wave would only list it again).
 */
export function newsOfLoss(applied: Applied, lostAt: number | undefined): boolean {
  return lostAt === undefined || applied.verifiedAt >= lostAt;
}

/** A bounded set of object uids: the oldest is dropped first when it is full. */
export class ReportedOnce {
  readonly #seen = new Set<string>();
  readonly #capacity: number;

  constructor(capacity = 10_000) {
    this.#capacity = capacity;
  }

  /** True the first time `uid` is seen (and then remembered), false after. */
  first(uid: string): boolean {
    if (this.#seen.has(uid)) return false;
    if (this.#seen.size >= this.#capacity) {
      const oldest = this.#seen.values().next();
      if (!oldest.done) this.#seen.delete(oldest.value);
    }
    this.#seen.add(uid);
    return true;
  }

  /** Forgets `uid`, so that a later change of mind is reported again. */
  forget(uid: string): void {
    this.#seen.delete(uid);
  }
}
