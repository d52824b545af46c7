// The judgement of `vhost-broker check`, the chart's `helm test`: which kinds the operator needs served,
// what the API server answered about them and about the operator's Lease turned into one line per
// failure, and whether to try again. Pure: check/run.ts does the reads, the clock is passed in.
import { controlPlaneKind, sqlKinds, topologyKinds, type KindRef } from "../../api/index.ts";
import { mariaDBDatabaseOrder } from "../../orders/mariadb/kind.ts";
import { rabbitMQVhostOrder } from "../../orders/rabbitmq/kind.ts";
import type { Clock } from "../../runtime/base/clock.ts";
import { observe, type LeaseSpec, type Observation } from "../../runtime/leadership/lease.ts";

/** The settings that decide which kinds the operator serves (settings.ts). */
export interface ServedSwitches {
  "topology-controller": boolean;
  "sql-controller": boolean;
  "mariadb-orders": boolean;
}

/**
 * Every custom kind the operator reads or writes with these switches: each order leg's order, its
 * children and the backend object it watches, the ControlPlane, and the kinds the built-in controllers
 * serve. Core kinds (Secrets) are always there.
 */
export function checkedKinds(switches: ServedSwitches): KindRef[] {
  const legs = [rabbitMQVhostOrder(), ...(switches["mariadb-orders"] ? [mariaDBDatabaseOrder()] : [])];
  const kinds = [
    controlPlaneKind,
    ...legs.flatMap((leg) => [
      leg.gvk,
      leg.container.gvk,
      ...leg.teardownKinds,
      ...leg.backendWatches.map((w) => w.kind),
    ]),
    ...(switches["topology-controller"] ? topologyKinds : []),
    ...(switches["sql-controller"] ? sqlKinds : []),
  ].filter((k) => k.group !== "");
  return [...new Map(kinds.map((k) => [resourceName(k), k])).values()];
}

/** The kind's CRD name, e.g. vhosts.rabbitmq.com. */
export const resourceName = (kind: KindRef): string => `${kind.plural}.${kind.group}`;

/** A read's outcome: its value, or the error's one-line message. */
export type Read<T> = { value: T } | { error: string };

/** What one attempt read. */
export interface Reads {
  /** The API server's address, for the message when it does not answer. */
  server: string;
  /** Set when the API server did not answer at all (GET /version): nothing else was read. */
  unreachable?: string;
  /** Per API version ("rabbitmq.com/v1beta1"): the resources discovery lists, undefined when not served. */
  discovery: Map<string, Read<string[] | undefined>>;
  /** Per kind (its CRD name): whether a list in the release namespace answered. */
  lists: Map<string, Read<true>>;
  /** The Lease, undefined when it does not exist. */
  lease: Read<LeaseSpec | undefined>;
}

/** The Lease as the check has watched it over its attempts (runtime/leadership/lease.ts's observations). */
export interface LeaseWatch {
  first: Observation;
  latest: Observation;
}

/** The watch after reading `spec` at monotonic time `monotonicNow`. */
export function watchLease(
  previous: LeaseWatch | undefined,
  spec: LeaseSpec | undefined,
  monotonicNow: number,
): LeaseWatch {
  const latest = observe(previous?.latest, spec, monotonicNow);
  return { first: previous?.first ?? latest, latest };
}

export interface Subject {
  kinds: readonly KindRef[];
  /** The release namespace: where the Lease is and where each kind is listed. */
  namespace: string;
  lease: string;
}

/** One line per failure; empty when the operator's kinds are served and listable and its Lease is live. */
export function failures(
  subject: Subject,
  reads: Reads,
  watch: LeaseWatch | undefined,
  clock: Pick<Clock, "now" | "monotonic">,
): string[] {
  if (reads.unreachable !== undefined)
    return [`cannot reach the API server at ${reads.server}: ${reads.unreachable}`];
  return [
    ...subject.kinds.flatMap((kind) => kindFailure(kind, reads) ?? []),
    ...leaseFailures(subject, reads, watch, clock),
  ];
}

function kindFailure(kind: KindRef, reads: Reads): string | undefined {
  const name = resourceName(kind);
  const served = reads.discovery.get(kind.apiVersion);
  if (served === undefined || "error" in served)
    return `cannot read the discovery of ${kind.apiVersion}: ${served?.error ?? "not read"}`;
  if (served.value === undefined)
    return `${kind.apiVersion} is not served: the CRD ${name} is missing or not established`;
  if (!served.value.includes(kind.plural))
    return `${kind.apiVersion} does not serve ${kind.plural}: the CRD ${name} is missing or not established`;
  const listed = reads.lists.get(name);
  if (listed === undefined || "error" in listed)
    return `cannot list ${name}: ${listed?.error ?? "not listed"}`;
  return undefined;
}

function leaseFailures(
  subject: Subject,
  reads: Reads,
  watch: LeaseWatch | undefined,
  clock: Pick<Clock, "now" | "monotonic">,
): string[] {
  const lease = `Lease ${subject.namespace}/${subject.lease}`;
  if ("error" in reads.lease) return [`cannot read the ${lease}: ${reads.lease.error}`];
  const spec = reads.lease.value;
  if (spec === undefined) return [`${lease} does not exist: no replica of the operator has led`];
  const holder = spec.holderIdentity ?? "";
  if (holder === "") return [`${lease} has no holder: no replica of the operator leads`];
  const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
  const renewed = Date.parse(spec.renewTime ?? "");
  // The wall clocks of the holder's node and this pod's may differ: a record seen changing while the
  // check watched it is renewed as well, by this process's monotonic clock.
  const recent = Number.isFinite(renewed) && Math.abs(clock.now() - renewed) <= durationMs;
  const seenRenewed =
    watch !== undefined &&
    watch.latest.record !== watch.first.record &&
    clock.monotonic() - watch.latest.at <= durationMs;
  if (recent || seenRenewed) return [];
  const ago = Number.isFinite(renewed) ? `${Math.round((clock.now() - renewed) / 1000)}s ago` : "never";
  return [
    `${lease} is held by ${holder} but was last renewed ${ago}, not within its duration of ${durationMs / 1000}s: the leader has stopped renewing it`,
  ];
}

export type Step = { kind: "pass" } | { kind: "retry"; inMs: number } | { kind: "fail" };

/**
 * After an attempt with these failures, `elapsedMs` into the check: pass, try again in `retryMs`, or fail
 * when the next attempt would start past `timeoutMs`.
 */
export function nextStep(
  failed: readonly string[],
  elapsedMs: number,
  timeoutMs: number,
  retryMs: number,
): Step {
  if (failed.length === 0) return { kind: "pass" };
  return elapsedMs + retryMs > timeoutMs ? { kind: "fail" } : { kind: "retry", inMs: retryMs };
}

/** The success line: what was found. */
export function passed(subject: Subject, spec: LeaseSpec | undefined, now: number): string {
  const renewed = Date.parse(spec?.renewTime ?? "");
  const ago = Number.isFinite(renewed)
    ? `, renewed ${Math.max(0, Math.round((now - renewed) / 1000))}s ago`
    : "";
  return `${subject.kinds.length} kinds served and listable in ${subject.namespace}; Lease ${subject.namespace}/${subject.lease} held by ${spec?.holderIdentity ?? ""}${ago}`;
}
