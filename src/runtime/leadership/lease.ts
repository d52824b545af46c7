import { microTime } from "../base/micro-time.ts";

// client-go's leader election decision on a coordination.k8s.io/v1 Lease, as pure functions.
// Expiry is judged by this process's monotonic clock from the moment it last saw the record change
// (client-go's observedTime), never by the times written in it, so that clock skew between replicas
// does not matter, nor a wall clock stepped back or forward. The wall clock only stamps the record's
// acquireTime and renewTime, which the API defines as MicroTime and nobody here reads.

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Observation {
  /** The record as last seen, serialised for comparison. */
  record: string;
  /** Monotonic time (ms, Clock.monotonic) when the record was first seen in that form. */
  at: number;
}

export type LeaseDecision =
  | { action: "create"; spec: LeaseSpec }
  | { action: "update"; spec: LeaseSpec }
  | { action: "wait"; holder: string };

/** The observation after reading `spec` at monotonic time `monotonicNow`. */
export function observe(
  previous: Observation | undefined,
  spec: LeaseSpec | undefined,
  monotonicNow: number,
): Observation {
  const record = JSON.stringify(spec ?? {});
  return previous?.record === record ? previous : { record, at: monotonicNow };
}

export function decideLease(input: {
  current: LeaseSpec | undefined;
  observation: Observation;
  identity: string;
  leaseDurationMs: number;
  /** The wall clock (ms since the epoch): only for the stamps written. */
  now: number;
  /** The monotonic clock: what expiry is judged by. */
  monotonicNow: number;
}): LeaseDecision {
  const { current, observation, identity, leaseDurationMs, now, monotonicNow } = input;
  const fresh: LeaseSpec = {
    holderIdentity: identity,
    leaseDurationSeconds: Math.round(leaseDurationMs / 1000),
    acquireTime: microTime(now),
    renewTime: microTime(now),
    leaseTransitions: 0,
  };
  if (!current) return { action: "create", spec: fresh };
  const holder = current.holderIdentity ?? "";
  const leading = holder === identity;
  if (holder !== "" && !leading && !lapsed(observation.at, leaseDurationMs, monotonicNow))
    return { action: "wait", holder };
  return {
    action: "update",
    spec: leading
      ? {
          ...fresh,
          acquireTime: current.acquireTime ?? fresh.acquireTime,
          leaseTransitions: current.leaseTransitions ?? 0,
        }
      : { ...fresh, leaseTransitions: (current.leaseTransitions ?? 0) + 1 },
  };
}

/** The record a leader writes when it steps down, so that a successor need not wait for expiry. */
export function releasedLease(current: LeaseSpec, now: number): LeaseSpec {
  return {
    holderIdentity: "",
    leaseDurationSeconds: 1,
    acquireTime: microTime(now),
    renewTime: microTime(now),
    leaseTransitions: current.leaseTransitions ?? 0,
  };
}

/**
 * Whether a period that began at monotonic time `since` and lasts `periodMs` is over at `monotonicNow`:
 * another holder's record unchanged for the lease duration, or this process's own hold on the Lease
 * (see lease-fence.ts).
 */
export function lapsed(since: number, periodMs: number, monotonicNow: number): boolean {
  return monotonicNow - since >= periodMs;
}
