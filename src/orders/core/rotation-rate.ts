// A bound on the rotations one namespace starts: with `gracePeriod: 0s`, each raise of
// spec.passwordGeneration makes the backend create one user and delete another within seconds, so a
// tenant raising in a loop (or a tool that does) would keep the ControlPlane's broker and OpenBao busy
// for every other tenant. A rotation past the bound waits; the delivered user stays valid meanwhile.
// The count lives in the leader's memory: a new leader starts from zero, which lets at most one more
// window through. So does when each held rotation was first held: a rotation window is judged as of then,
// so that a rotation owed inside the window and held past its end is not moved to the next one.
import type { Clock } from "../../runtime/base/clock.ts";

export interface RotationRate {
  /** Rotations one namespace may start in any window; 0 turns the bound off. */
  readonly limit: number;
  readonly windowMs: number;
}

/** One rotation started: which order's which generation, and when. */
export interface RotationStart {
  readonly key: string;
  readonly at: number;
}

/**
 * How long the rotation `key` must wait before it may start, given the rotations `starts` the namespace
 * started: 0 when it may start now. A rotation already counted (it is continued on a later pass) always
 * may.
 */
export function rotationWait(
  starts: readonly RotationStart[],
  key: string,
  now: number,
  rate: RotationRate,
): number {
  if (rate.limit <= 0) return 0;
  const recent = starts.filter((s) => s.at > now - rate.windowMs);
  if (recent.some((s) => s.key === key) || recent.length < rate.limit) return 0;
  const oldest = Math.min(...recent.map((s) => s.at));
  return Math.max(1, oldest + rate.windowMs - now);
}

/** The namespace whose bound counts an order's rotations: one per cluster and namespace. */
export const rotationNamespace = (order: { cluster: string; namespace: string }): string =>
  `${order.cluster}/${order.namespace}`;

/** The rotations started per namespace in the last window, in this process. */
export class NamespaceRotations {
  private readonly starts = new Map<string, RotationStart[]>();
  /** When each held order's rotation was first held (wall ms), by namespace and order name. */
  private readonly holds = new Map<string, number>();
  readonly rate: RotationRate;
  private readonly clock: Pick<Clock, "monotonic">;

  constructor(rate: RotationRate, clock: Pick<Clock, "monotonic">) {
    this.rate = rate;
    this.clock = clock;
  }

  /** 0 when the rotation `key` of `namespace` may start now (it is counted), else how long it waits. */
  take(namespace: string, key: string): number {
    const now = this.clock.monotonic();
    const starts = (this.starts.get(namespace) ?? []).filter((s) => s.at > now - this.rate.windowMs);
    const wait = rotationWait(starts, key, now, this.rate);
    if (wait === 0 && !starts.some((s) => s.key === key)) starts.push({ key, at: now });
    if (starts.length === 0) this.starts.delete(namespace);
    else this.starts.set(namespace, starts);
    return wait;
  }

  /** When the order's rotation was first held back (wall ms), while it is. */
  heldSince(namespace: string, order: string): number | undefined {
    return this.holds.get(`${namespace} ${order}`);
  }

  /** The order's rotation is held back at `at` (wall ms); the first time is kept. */
  hold(namespace: string, order: string, at: number): void {
    const key = `${namespace} ${order}`;
    if (!this.holds.has(key)) this.holds.set(key, at);
  }

  /** The order's rotation started, or is no longer planned. */
  release(namespace: string, order: string): void {
    this.holds.delete(`${namespace} ${order}`);
  }
}
