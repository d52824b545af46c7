// The gates an order passes before anything is provisioned or delivered: consent (admission), the
// managed bus, the secret store and the delivery endpoint. Each is a pure function of what the
// reconciler read; a closed gate says which reason both (or one) conditions carry, the message, when
// to look again, and whether the order is frozen.
import { Reason, REQUEUE, messages, type ReasonName } from "./conditions.ts";
import { parseEndpoint, parsePort, type Endpoint } from "./endpoint.ts";
import type { OrderKey } from "./naming.ts";

/** When to reconcile again: after a delay, through the runtime's error backoff, or on the next event. */
export type Requeue = { kind: "after"; ms: number } | { kind: "backoff" } | { kind: "none" };

/** Which conditions a closed gate sets. */
export type GateScope = "both" | "vhost" | "delivery";

export interface ClosedGate {
  reason: ReasonName;
  message: string;
  requeue: Requeue;
  scope: GateScope;
  /**
   * Consent is missing: the order holds no finalizer yet (or keeps the one it has), and nothing is
   * provisioned, rotated, delivered, repaired or removed; only a deletion still tears down.
   */
  frozen: boolean;
}

export type GateResult<T> = { open: true; value: T } | { open: false; gate: ClosedGate };

const after = (ms: number): Requeue => ({ kind: "after", ms });
const closed = <T>(gate: ClosedGate): GateResult<T> => ({ open: false, gate });
const open = <T>(value: T): GateResult<T> => ({ open: true, value });

export interface NamespacedName {
  namespace: string;
  name: string;
}

/** The order as the gates read it. */
export interface OrderPlacement extends OrderKey {
  controlPlaneRef: { name: string; namespace?: string | undefined };
}

/** The ControlPlane fields orders read. */
export interface ControlPlaneView extends NamespacedName {
  namespaceAssignments?: readonly { namespace: string; targetClusterRef?: { name: string } | undefined }[];
  messaging?:
    { clusterRef?: { name: string } | undefined; secretRef?: { name: string } | undefined } | undefined;
  publishedMessagingEndpoint?: string | undefined;
}

/** The longest label value; the cluster name is carried as one. */
export const MAX_LABEL_VALUE = 63;

/** The ControlPlane an order names; an empty ref namespace is the order's own. */
export function controlPlaneKey(order: OrderPlacement): NamespacedName {
  return { namespace: order.controlPlaneRef.namespace || order.namespace, name: order.controlPlaneRef.name };
}

/**
 * Consent: ClusterNameTooLong, then ControlPlaneNotFound (management cluster) or NamespaceNotAssigned
 * (a missing ControlPlane on a target cluster reads as unassigned, so that a tenant there cannot probe
 * which ControlPlanes exist), then the namespaceAssignments entry for the order's namespace and cluster.
 */
export function admissionGate(
  order: OrderPlacement,
  controlPlane: ControlPlaneView | undefined,
): GateResult<ControlPlaneView> {
  const frozen = (reason: ReasonName, message: string, requeue: Requeue) =>
    closed<ControlPlaneView>({ reason, message, requeue, scope: "both", frozen: true });
  if (order.cluster.length > MAX_LABEL_VALUE) {
    return frozen(Reason.ClusterNameTooLong, messages.clusterNameTooLong(order.cluster), { kind: "none" });
  }
  const cpKey = controlPlaneKey(order);
  const unassigned = () =>
    frozen(
      Reason.NamespaceNotAssigned,
      messages.namespaceNotAssigned(cpKey, order.namespace, order.cluster),
      after(REQUEUE.unassigned),
    );
  if (!controlPlane) {
    if (order.cluster !== "") return unassigned();
    return frozen(Reason.ControlPlaneNotFound, messages.controlPlaneNotFound(cpKey), after(REQUEUE.short));
  }
  const assigned = (controlPlane.namespaceAssignments ?? []).some(
    (a) => a.namespace === order.namespace && (a.targetClusterRef?.name ?? "") === order.cluster,
  );
  return assigned ? open(controlPlane) : unassigned();
}

/** The managed bus a ControlPlane declares: its RabbitmqCluster, in the ControlPlane's namespace. */
export function messagingGate(controlPlane: ControlPlaneView): GateResult<NamespacedName> {
  const m = controlPlane.messaging;
  const refuse = (reason: ReasonName, message: string) =>
    closed<NamespacedName>({ reason, message, requeue: { kind: "none" }, scope: "both", frozen: false });
  if (m?.secretRef) return refuse(Reason.MessagingNotManaged, messages.messagingNotManaged(controlPlane));
  if (!m?.clusterRef) return refuse(Reason.MessagingNotDeclared, messages.messagingNotDeclared(controlPlane));
  return open({ namespace: controlPlane.namespace, name: m.clusterRef.name });
}

/** The RabbitmqCluster fields the bus gate reads. */
export interface RabbitmqClusterView {
  status?:
    | {
        defaultUser?: { secretReference?: { name?: string; namespace?: string } | undefined } | undefined;
        conditions?: readonly { type: string; status: string }[] | undefined;
      }
    | undefined;
}

/** A Secret as the API returns it: values base64-encoded. */
export interface SecretView {
  data?: Record<string, string> | undefined;
}

/** The broker's in-cluster address and the cluster that serves it. */
export interface ManagedBus {
  rabbitmqCluster: NamespacedName;
  endpoint: Endpoint;
}

export const DEFAULT_USER_KEYS = ["username", "password", "host", "port"] as const;

/** Where the default-user Secret is, once the RabbitmqCluster reports it. */
export function defaultUserSecretKey(
  rabbitmqCluster: NamespacedName,
  view: RabbitmqClusterView,
): NamespacedName | undefined {
  const ref = view.status?.defaultUser?.secretReference;
  if (!ref?.name) return undefined;
  return { namespace: ref.namespace || rabbitmqCluster.namespace, name: ref.name };
}

/**
 * The bus is usable once the RabbitmqCluster and its default-user Secret exist with username,
 * password, host and port all non-empty (WaitingForMessagingCredentials), and the cluster reports
 * AllReplicasReady (WaitingForMessaging). The password is checked for presence only; it is never
 * returned or quoted.
 */
export function busGate(input: {
  rabbitmqCluster: NamespacedName;
  view: RabbitmqClusterView | undefined;
  defaultUserSecret: SecretView | undefined;
}): GateResult<ManagedBus> {
  const rmq = input.rabbitmqCluster;
  const wait = (reason: ReasonName, message: string) =>
    closed<ManagedBus>({ reason, message, requeue: after(REQUEUE.short), scope: "both", frozen: false });
  const credentials = (message: string) => wait(Reason.WaitingForMessagingCredentials, message);
  if (!input.view) return credentials(messages.rabbitmqClusterMissing(rmq));
  const secretKey = defaultUserSecretKey(rmq, input.view);
  if (!secretKey) return credentials(messages.defaultUserNotReported(rmq));
  if (!input.defaultUserSecret) return credentials(messages.defaultUserSecretMissing(rmq, secretKey));
  const data = input.defaultUserSecret.data ?? {};
  const value = (k: string) => Buffer.from(data[k] ?? "", "base64").toString("utf8");
  const missing = DEFAULT_USER_KEYS.filter((k) => value(k) === "");
  if (missing.length > 0) {
    return credentials(messages.defaultUserSecretIncomplete(secretKey.namespace, secretKey.name, missing));
  }
  const port = parsePort(value("port"));
  if (!port.ok) {
    return credentials(messages.defaultUserSecretBadPort(secretKey.namespace, secretKey.name, port.message));
  }
  const ready = input.view.status?.conditions?.some(
    (c) => c.type === "AllReplicasReady" && c.status === "True",
  );
  if (!ready) return wait(Reason.WaitingForMessaging, messages.waitingForMessaging(rmq));
  return open({ rabbitmqCluster: rmq, endpoint: { host: value("host"), port: port.value } });
}

/** Reading the ControlPlane's bus failed at the Kubernetes level; retried with backoff. */
export function busReadError(what: string, cause: string): ClosedGate {
  return {
    reason: Reason.VhostError,
    message: messages.busReadFailed(what, cause),
    requeue: { kind: "backoff" },
    scope: "both",
    frozen: false,
  };
}

/** The secret store's state as the backup reports it (see src/backup). */
export interface StoreReadiness {
  ready: boolean;
  /** Why it cannot be used; free of tokens. */
  message?: string | undefined;
}

/** SecretStoreNotReady on VhostReady until OpenBao can be used; looked at again after 10 s. */
export function secretStoreGate(store: StoreReadiness): GateResult<true> {
  if (store.ready) return open(true);
  return closed({
    reason: Reason.SecretStoreNotReady,
    message: messages.secretStoreNotReady(store.message ?? "no reason given"),
    requeue: after(REQUEUE.short),
    scope: "vhost",
    frozen: false,
  });
}

/**
 * The address the delivered Secret names: the broker's in-cluster one on the management cluster, the
 * ControlPlane's published endpoint on a target cluster (MessagingNotPublished without it,
 * DeliveryError when it does not parse).
 */
export function deliveryEndpointGate(
  order: OrderKey,
  controlPlane: ControlPlaneView,
  bus: ManagedBus,
): GateResult<Endpoint> {
  if (order.cluster === "") return open(bus.endpoint);
  const published = controlPlane.publishedMessagingEndpoint;
  const refuse = (reason: ReasonName, message: string) =>
    closed<Endpoint>({ reason, message, requeue: { kind: "none" }, scope: "delivery", frozen: false });
  if (!published) {
    return refuse(Reason.MessagingNotPublished, messages.messagingNotPublished(controlPlane, order.cluster));
  }
  const parsed = parseEndpoint(published);
  if (!parsed.ok) return refuse(Reason.DeliveryError, parsed.message);
  return open(parsed.value);
}

/**
 * An order on a target cluster is looked at again within 10 minutes whatever its gate says: the target
 * can be out of reach when an event that concerns it happens.
 */
export function capRequeue(requeue: Requeue, cluster: string): Requeue {
  if (cluster === "" || requeue.kind === "backoff") return requeue;
  if (requeue.kind === "none") return after(REQUEUE.long);
  return after(Math.min(requeue.ms, REQUEUE.long));
}
