// What the engine of resources outside Kubernetes needs of every backend's deps: the Kubernetes port
// and logger of the reconcile, the clock, the intervals, the per-process memo, the Events and the
// gatekeeper. A backend's deps (the topology controller's, the SQL controller's) extend these.
import { createSecretKey, randomBytes, type KeyObject } from "node:crypto";
import type { KindRef, ObjectMeta } from "../api/index.ts";
import type { Gatekeeper } from "../gatekeeper/gatekeeper.ts";
import type { Condition } from "../runtime/base/conditions.ts";
import { realClock, type Clock } from "../runtime/base/clock.ts";
import type { Kube } from "../runtime/port/kube.ts";
import type { LogSink } from "../runtime/base/logging.ts";
import { AppliedMemo, ReportedOnce } from "./memo.ts";

export interface ExternalSettings {
  /** How long an applied object is trusted before it is read back from its endpoint (default 5 min). */
  verificationPeriodMs: number;
  /** Retry while the endpoint cannot be used yet, or an object this one needs is not there (default 10 s). */
  waitingRetryMs: number;
  /** Retry after an endpoint that failed to answer (default 30 s). */
  transientRetryMs: number;
  /**
   * --secret-namespaces: the only namespaces whose Secrets the operator may use; empty = every one. An
   * object that needs Secrets elsewhere is reported, never served (no request the RBAC would refuse).
   */
  secretNamespaces: readonly string[];
}

export const defaultExternalSettings: ExternalSettings = {
  verificationPeriodMs: 5 * 60_000,
  waitingRetryMs: 10_000,
  transientRetryMs: 30_000,
  secretNamespaces: [],
};

/**
 * The Events of a pass; never throws. It starts the writes and returns: a pass does not wait for its
 * Events before its worker takes the next object.
 */
export interface TransitionEvents {
  /**
   * The conditions that changed status or reason. `type` overrides the default (Normal for True,
   * Warning otherwise); "none" records nothing.
   */
  record(
    kind: KindRef,
    object: { metadata: ObjectMeta },
    before: readonly Condition[] | undefined,
    after: readonly Condition[],
    type?: "Normal" | "Warning" | "none",
  ): void;
  /** A step of a deleted object's teardown (Deleting, Deleted), as a Normal Event. */
  teardown(
    kind: KindRef,
    object: { metadata: ObjectMeta },
    reason: "Deleting" | "Deleted",
    message: string,
  ): void;
}

/** Per-process state shared by a backend's kinds; it lives as long as the deps. */
export interface ExternalState {
  /** Key of the desired-state HMAC (a state may hold a password): random per process. */
  hashKey: KeyObject;
  applied: AppliedMemo;
  reported: ReportedOnce;
}

export interface ExternalDeps {
  /** The management cluster, bound to the reconcile's signal. */
  kube: Kube;
  settings: ExternalSettings;
  clock: Pick<Clock, "now" | "monotonic">;
  logger: LogSink;
  state: ExternalState;
  /** Absent where nothing records events (the tests that call a kind directly). */
  events?: TransitionEvents;
  /** The plugins around each pass; absent = none. */
  gatekeeper?: Gatekeeper;
  /**
   * Runs the passes of objects by memo key (`kind/namespace/name`) at once; absent where no controller
   * runs them (the tests that call a kind directly).
   */
  wake?: (keys: readonly string[]) => void;
}

/** What a backend's deps take from its options beyond its own: the clock, the Events, the gatekeeper. */
export interface ExternalOptions {
  clock?: Pick<Clock, "now" | "monotonic">;
  events?: TransitionEvents;
  gatekeeper?: Gatekeeper;
}

/** The parts of the deps that outlive a reconcile and every backend has, `settings` over `defaults`. */
export function sharedExternalDeps<T extends ExternalSettings, St extends ExternalState>(
  options: ExternalOptions & { settings?: Partial<T> | undefined },
  defaults: T,
  state: St,
): Pick<ExternalDeps, "clock" | "events" | "gatekeeper"> & { settings: T; state: St } {
  return {
    settings: { ...defaults, ...options.settings },
    clock: options.clock ?? realClock,
    state,
    ...(options.events ? { events: options.events } : {}),
    ...(options.gatekeeper ? { gatekeeper: options.gatekeeper } : {}),
  };
}

export function newExternalState(): ExternalState {
  return {
    hashKey: createSecretKey(randomBytes(32)),
    applied: new AppliedMemo(),
    reported: new ReportedOnce(),
  };
}
