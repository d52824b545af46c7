// What one pass of the order reconciler needs from the outside: the clusters, the credential store, the
// clock, a logger, an event sink and its settings. Everything is injected so that the runtime decides
// where clients, caches and time come from.
import type * as k8s from "@kubernetes/client-node";
import type { CredentialStore } from "../../backup/store.ts";
import type { LogSink } from "../../runtime/logging.ts";
import type { SwitchCheck } from "../generations.ts";

/** The order an event is about. */
export interface EventTarget {
  cluster: string;
  namespace: string;
  name: string;
  uid: string;
}

/** A Kubernetes event, emitted on transitions only. Its message never carries a secret. */
export interface OrderEvent {
  type: "Normal" | "Warning";
  reason: string;
  message: string;
}

export interface EventSink {
  emit(target: EventTarget, event: OrderEvent): void | Promise<void>;
}

/** The successor's credentials and where the broker listens, for the pre-switch login. */
export interface BrokerLogin {
  host: string;
  port: number;
  vhost: string;
  username: string;
  password: string;
}

export interface ReconcilerSettings {
  /** How long the pre-switch AMQP login may take. */
  brokerCheckTimeoutMs: number;
}

export const DEFAULT_SETTINGS: ReconcilerSettings = { brokerCheckTimeoutMs: 10_000 };

export interface OrderDeps {
  /** The management cluster: ControlPlanes, RabbitmqClusters and the order's children live there. */
  management: k8s.KubeConfig;
  /** The cluster the orders of this reconciler live on; name "" is the management cluster itself. */
  orderCluster: { name: string; config: k8s.KubeConfig };
  store: CredentialStore;
  now: () => Date;
  log: LogSink;
  events: EventSink;
  settings: ReconcilerSettings;
  /** Checks that the broker accepts a successor's credentials before the switch (default: AMQP login). */
  brokerCheck?: ((login: BrokerLogin, timeoutMs: number) => Promise<SwitchCheck>) | undefined;
}

/**
 * A failed pass. `transient` is retried with the runtime's backoff (API conflicts, unreachable servers,
 * failed writes); `terminal` is not retried until the order changes. Messages carry no secret.
 */
export class ReconcileError extends Error {
  readonly kind: "transient" | "terminal";

  constructor(kind: "transient" | "terminal", message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ReconcileError";
    this.kind = kind;
  }
}

/** What a pass asks of the work queue: look again after this many milliseconds, or wait for an event. */
export interface ReconcileResult {
  requeueAfterMs?: number | undefined;
}
