// What one pass of an order reconciler needs from the outside: the Kubernetes port on the management
// cluster and on the order's own cluster, the credential store, the clock, a logger, an event sink and
// its settings. Everything is injected so that the runtime decides where caches and time come from, and
// a fake port drives whole passes in the tests.
import type { CredentialStore } from "../../backup/store.ts";
import type { Gatekeeper } from "../../gatekeeper/gatekeeper.ts";
import type { Clock } from "../../runtime/base/clock.ts";
import type { LogSink } from "../../runtime/base/logging.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import type { ConnectionCount } from "./connections.ts";
import type { SwitchCheck } from "./generations.ts";
import type { SuccessorLogin, StrayRemoval } from "./kind.ts";
import type { OrderKey } from "./naming.ts";
import type { NamespaceRotations } from "./rotation-rate.ts";
import type { OrphanReaping } from "./orphan-sightings.ts";
import type { SuccessorBackoff } from "./requeue.ts";
import type { EventType } from "./types.ts";

/** The order an event is about. */
export interface EventTarget {
  cluster: string;
  namespace: string;
  name: string;
  uid: string;
}

/** A Kubernetes event, emitted on transitions only. Its message never carries a secret. */
export interface OrderEvent {
  type: EventType;
  reason: string;
  message: string;
}

export interface EventSink {
  emit(target: EventTarget, event: OrderEvent): void | Promise<void>;
}

/** Where a teardown says Deleting as it starts and Deleted from the step that released the finalizer. */
export interface TeardownEventLog {
  deleting(target: EventTarget, kind: string): Promise<void>;
  deleted(target: EventTarget, kind: string): Promise<void>;
}

export interface ReconcilerSettings {
  /** How long the pre-switch check may take. */
  brokerCheckTimeoutMs: number;
  /** The longest wait of a backoff: the runtime's transient requeue interval. */
  transientCapMs: number;
  /** How long past its grace period a superseded user may stay while connections still use it. */
  sweepHoldMs: number;
  /** --secret-namespaces: the only namespaces of the management cluster with Secrets; absent or empty = all. */
  secretNamespaces?: readonly string[] | undefined;
}

/** Where a pass reports a held sweep: the connections that hold it, or undefined once it is not held. */
export interface SweepHoldReport {
  held(order: OrderKey, connections: number | undefined): void;
}

export interface OrderDeps {
  /** The management cluster: ControlPlanes, backends and the order's children live there. */
  management: Kube;
  /** The cluster the order lives on (the management cluster's port for cluster ""). */
  home: Kube;
  store: CredentialStore;
  clock: Pick<Clock, "now" | "monotonic">;
  /**
   * When the pass was queued (wall clock, ms; the runtime's ReconcileContext): a rotation window open
   * then still lets the rotation start, however long the pass waited in a busy queue. Absent: now.
   */
  queuedAt?: number | undefined;
  log: LogSink;
  events: EventSink;
  settings: ReconcilerSettings;
  /** Per-process backoff of refused successors; lives as long as the controller. */
  backoff: SuccessorBackoff;
  /** Removal of the children an order that no longer exists left behind; absent = none. */
  orphans?: OrphanReaping | undefined;
  /** The plugins around each pass; absent = none. */
  gatekeeper?: Gatekeeper | undefined;
  /** Replaces the kind's question of who uses a superseded user (tests). */
  connections?: ((username: string, timeoutMs: number) => Promise<ConnectionCount>) | undefined;
  /** The bound on the rotations a namespace starts; absent = none. */
  rotations?: NamespaceRotations | undefined;
  /** Replaces the kind's removal of accounts no child declares (tests); same arguments after the backend. */
  strayAccounts?:
    | ((
        resource: string,
        stray: (username: string) => boolean,
        known: readonly string[],
      ) => Promise<StrayRemoval>)
    | undefined;
  /** The held-sweep metric; absent = not reported. */
  sweepHolds?: SweepHoldReport | undefined;
  /** Replaces the kind's successor check (tests). */
  successorCheck?: ((login: SuccessorLogin, timeoutMs: number) => Promise<SwitchCheck>) | undefined;
  /** The teardown's Deleting and Deleted Events, each said once per order and process; absent = none. */
  teardownEvents?: TeardownEventLog | undefined;
}
