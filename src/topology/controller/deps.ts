// What the topology reconcilers need: the management cluster's API, the broker clients, the settings
// and the per-process state (applied-state memo, once-per-object log).
import { randomBytes } from "node:crypto";
import * as k8s from "@kubernetes/client-node";
import type { KindRef, ObjectMeta } from "../../api/index.ts";
import type { LogSink } from "../../runtime/logging.ts";
import { ManagementClients } from "../broker/index.ts";
import { kubeBrokerLookup } from "../resolve/kube-lookup.ts";
import type { BrokerLookup, ResolveSettings } from "../resolve/resolve-broker.ts";
import type { Condition } from "./conditions.ts";
import { AppliedMemo, ReportedOnce } from "./memo.ts";
import type { OwnershipSettings } from "./ownership.ts";

/** Time as a dependency (the runtime's Clock satisfies it). */
export interface Now {
  now(): number;
}

export interface ControllerSettings {
  /** How long an applied object is trusted before it is read back from the broker (default 5 min). */
  verificationPeriodMs: number;
  /** Retry while the broker cannot be used yet, or a referenced object is not ready (default 10 s). */
  waitingRetryMs: number;
  /** Retry after a broker that failed to answer (default 30 s). */
  transientRetryMs: number;
  /** Delete the broker's `guest` user on every verification of each broker (seed 000; default off). */
  deleteGuestUser: boolean;
}

export const defaultControllerSettings: ControllerSettings = {
  verificationPeriodMs: 5 * 60_000,
  waitingRetryMs: 10_000,
  transientRetryMs: 30_000,
  deleteGuestUser: false,
};

/** Reports the conditions that changed status or reason as Kubernetes events; never throws. */
export interface TransitionEvents {
  record(
    kind: KindRef,
    object: { metadata: ObjectMeta },
    before: readonly Condition[] | undefined,
    after: readonly Condition[],
  ): Promise<void>;
}

/** Per-process state shared by all seven kinds; it lives as long as the deps. */
export interface ControllerState {
  /** Key of the desired-state HMAC: random per process, so no hash is meaningful outside it. */
  hashKey: Uint8Array;
  applied: AppliedMemo;
  reported: ReportedOnce;
  /** When the guest user was last deleted, per broker key. */
  guestDeletedAt: Map<string, number>;
}

export interface ControllerDeps {
  custom: k8s.CustomObjectsApi;
  core: k8s.CoreV1Api;
  lookup: BrokerLookup;
  clients: ManagementClients;
  resolve: ResolveSettings;
  ownership: OwnershipSettings;
  settings: ControllerSettings;
  clock: Now;
  logger: LogSink;
  state: ControllerState;
  /** Absent where nothing records events (the reconcile tests that call a kind directly). */
  events?: TransitionEvents;
}

export function newControllerState(): ControllerState {
  return {
    hashKey: randomBytes(32),
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
  clock?: Now;
  events?: TransitionEvents;
}

/** Deps on the management cluster of `config`. */
export function createControllerDeps(config: k8s.KubeConfig, options: ControllerDepsOptions): ControllerDeps {
  return {
    custom: config.makeApiClient(k8s.CustomObjectsApi),
    core: config.makeApiClient(k8s.CoreV1Api),
    lookup: kubeBrokerLookup(config),
    clients: options.clients ?? new ManagementClients(),
    resolve: options.resolve ?? { domain: "" },
    ownership: options.ownership,
    settings: { ...defaultControllerSettings, ...options.settings },
    clock: options.clock ?? { now: () => Date.now() },
    logger: options.logger,
    state: newControllerState(),
    ...(options.events ? { events: options.events } : {}),
  };
}
