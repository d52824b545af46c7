// What the topology reconcilers need: the Kubernetes port and logger of the reconcile, the broker
// clients, the settings and the per-process state (applied-state memo, once-per-object log).
import type { Kube } from "../runtime/port/kube.ts";
import type { LogSink } from "../runtime/base/logging.ts";
import {
  defaultExternalSettings,
  newExternalState,
  sharedExternalDeps,
  type ExternalDeps,
  type ExternalOptions,
  type ExternalSettings,
  type ExternalState,
  PeriodSnapshots,
} from "../external/index.ts";
import { ManagementClients, type ManagementClient } from "./broker/index.ts";
import { listResource, type BrokerListing } from "./broker/listing.ts";
import { BrokerChecks } from "./broker-checks.ts";
import { kubeBrokerLookup } from "../rabbitmq/kube-lookup.ts";
import type { BrokerLookup, ResolveSettings } from "../rabbitmq/resolve-broker.ts";
import type { OwnershipSettings } from "./ownership.ts";

export interface ControllerSettings extends ExternalSettings {
  /** Delete the broker's `guest` user on every verification of each broker (seed 000; default off). */
  deleteGuestUser: boolean;
  /** How often each broker is checked for a restart that emptied it (broker-checks.ts); 0 = never. */
  brokerCheckIntervalMs: number;
}

export const defaultControllerSettings: ControllerSettings = {
  ...defaultExternalSettings,
  deleteGuestUser: false,
  brokerCheckIntervalMs: 15_000,
};

/** Per-process state shared by all seven kinds; it lives as long as the deps. */
export interface ControllerState extends ExternalState {
  /** When the guest user was last deleted, per broker key. */
  guestDeletedAt: Map<string, number>;
  /** The broker listings of the verification period, per login, which answer the verifications (sync.ts). */
  listings: PeriodSnapshots<ManagementClient, BrokerListing>;
  /** The brokers whose definitions are checked for a restart that emptied them (broker-checks.ts). */
  brokers: BrokerChecks;
}

export interface ControllerDeps extends ExternalDeps {
  /** The broker lookup on `kube`. */
  lookup: BrokerLookup;
  clients: ManagementClients;
  resolve: ResolveSettings;
  ownership: OwnershipSettings;
  settings: ControllerSettings;
  state: ControllerState;
}

export function newControllerState(): ControllerState {
  return {
    ...newExternalState(),
    guestDeletedAt: new Map(),
    listings: new PeriodSnapshots((client: ManagementClient) => client.endpoint, listResource),
    brokers: new BrokerChecks(),
  };
}

export interface ControllerDepsOptions extends ExternalOptions {
  ownership: OwnershipSettings;
  logger: LogSink;
  clients?: ManagementClients;
  resolve?: ResolveSettings;
  settings?: Partial<ControllerSettings>;
}

/** What outlives one reconcile: everything but the port and the logger, which each reconcile brings. */
export type SharedDeps = Omit<ControllerDeps, "kube" | "lookup" | "logger">;

export function createSharedDeps(options: Omit<ControllerDepsOptions, "logger">): SharedDeps {
  return {
    clients: options.clients ?? new ManagementClients(),
    resolve: options.resolve ?? { domain: "" },
    ownership: options.ownership,
    ...sharedExternalDeps(options, defaultControllerSettings, newControllerState()),
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
