// What the topology reconcilers need: the Kubernetes port and logger of the reconcile, the broker
// clients, the settings and the per-process state (applied-state memo, once-per-object log).
import { createSecretKey, randomBytes, type KeyObject } from "node:crypto";
import type { KindRef, ObjectMeta } from "../../api/index.ts";
import type { Gatekeeper } from "../../gatekeeper/gatekeeper.ts";
import type { Kube } from "../../runtime/kube.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { LogSink } from "../../runtime/logging.ts";
import { ManagementClients } from "../broker/index.ts";
import { kubeBrokerLookup } from "../../rabbitmq/kube-lookup.ts";
import type { BrokerLookup, ResolveSettings } from "../../rabbitmq/resolve-broker.ts";
import type { Condition } from "./conditions.ts";
import { AppliedMemo, ReportedOnce } from "../../runtime/applied-memo.ts";
import type { OwnershipSettings } from "./ownership.ts";

export interface ControllerSettings {
  /** How long an applied object is trusted before it is read back from the broker (default 5 min). */
  verificationPeriodMs: number;
  /** Retry while the broker cannot be used yet, or a referenced object is not ready (default 10 s). */
  waitingRetryMs: number;
  /** Retry after a broker that failed to answer (default 30 s). */
  transientRetryMs: number;
  /** Delete the broker's `guest` user on every verification of each broker (seed 000; default off). */
  deleteGuestUser: boolean;
  /**
   * --secret-namespaces: the only namespaces whose Secrets the operator may use; empty = every one. An
   * object that needs Secrets elsewhere is reported, never served (no request the RBAC would refuse).
   */
  secretNamespaces: readonly string[];
}

export const defaultControllerSettings: ControllerSettings = {
  verificationPeriodMs: 5 * 60_000,
  waitingRetryMs: 10_000,
  transientRetryMs: 30_000,
  deleteGuestUser: false,
  secretNamespaces: [],
};

/**
 * Reports the conditions that changed status or reason as Kubernetes events; never throws. `type`
 * overrides the default (Normal for True, Warning otherwise); "none" records nothing. It starts the
 * writes and returns: a pass does not wait for its Events before its worker takes the next object.
 */
export interface TransitionEvents {
  record(
    kind: KindRef,
    object: { metadata: ObjectMeta },
    before: readonly Condition[] | undefined,
    after: readonly Condition[],
    type?: "Normal" | "Warning" | "none",
  ): void;
}

/** Per-process state shared by all seven kinds; it lives as long as the deps. */
export interface ControllerState {
  /** Key of the desired-state HMAC: random per process, so no hash is meaningful outside it. */
  hashKey: KeyObject;
  applied: AppliedMemo;
  reported: ReportedOnce;
  /** When the guest user was last deleted, per broker key. */
  guestDeletedAt: Map<string, number>;
}

export interface ControllerDeps {
  /** The management cluster, bound to the reconcile's signal. */
  kube: Kube;
  /** The broker lookup on `kube`. */
  lookup: BrokerLookup;
  clients: ManagementClients;
  resolve: ResolveSettings;
  ownership: OwnershipSettings;
  settings: ControllerSettings;
  clock: Pick<Clock, "now">;
  logger: LogSink;
  state: ControllerState;
  /** Absent where nothing records events (the reconcile tests that call a kind directly). */
  events?: TransitionEvents;
  /** The plugins around each pass; absent = none. */
  gatekeeper?: Gatekeeper;
}

export function newControllerState(): ControllerState {
  return {
    hashKey: createSecretKey(randomBytes(32)),
    applied: new AppliedMemo(),
    reported: new ReportedOnce(),
    guestDeletedAt: new Map(),
  };
}

export interface ControllerDepsOptions {
  ownership: OwnershipSettings;
  logger: LogSink;
  clients?: ManagementClients;
  resolve?: ResolveSettings;
  settings?: Partial<ControllerSettings>;
  clock?: Pick<Clock, "now">;
  events?: TransitionEvents;
  gatekeeper?: Gatekeeper;
}

/** What outlives one reconcile: everything but the port and the logger, which each reconcile brings. */
export type SharedDeps = Omit<ControllerDeps, "kube" | "lookup" | "logger">;

export function createSharedDeps(options: Omit<ControllerDepsOptions, "logger">): SharedDeps {
  return {
    clients: options.clients ?? new ManagementClients(),
    resolve: options.resolve ?? { domain: "" },
    ownership: options.ownership,
    settings: { ...defaultControllerSettings, ...options.settings },
    clock: options.clock ?? { now: () => Date.now() },
    state: newControllerState(),
    ...(options.events ? { events: options.events } : {}),
    ...(options.gatekeeper ? { gatekeeper: options.gatekeeper } : {}),
  };
}

/** The deps of one reconcile: `kube` bound to its signal, `logger` carrying its reconcileID. */
export function reconcileDeps(shared: SharedDeps, kube: Kube, logger: LogSink): ControllerDeps {
  return { ...shared, kube, lookup: kubeBrokerLookup(kube), logger };
}

/** Deps on one port for every reconcile, as the integration tests drive the kinds. */
export function createControllerDeps(kube: Kube, options: ControllerDepsOptions): ControllerDeps {
  return reconcileDeps(createSharedDeps(options), kube, options.logger);
}
