import { microTime } from "./micro-time.ts";

// client-go's leader election decision on a coordination.k8s.io/v1 Lease, as a pure function.
// Expiry is judged by the local time at which this process last saw the record change, never by
// the times written in it, so that clock skew between replicas does not matter.

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
  /** Local time (ms) when the record was first seen in that form. */
  at: number;
}

export type LeaseDecision =
  | { action: "create"; spec: LeaseSpec }
  | { action: "update"; spec: LeaseSpec }
  | { action: "wait"; holder: string };

export function observe(
  previous: Observation | undefined,
  spec: LeaseSpec | undefined,
  now: number,
): Observation {
  const record = JSON.stringify(spec ?? {});
  return previous?.record === record ? previous : { record, at: now };
}

export function decideLease(input: {
  current: LeaseSpec | undefined;
  observation: Observation;
  identity: string;
  leaseDurationMs: number;
  now: number;
}): LeaseDecision {
  const { current, observation, identity, leaseDurationMs, now } = input;
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
  if (holder !== "" && !leading && observation.at + leaseDurationMs > now) return { action: "wait", holder };
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
