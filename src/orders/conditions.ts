// The order's conditions: every reason of seed 001's table, every message the order writes (in one
// place, the reference's verbatim where it gives them), and the builders of VhostReady, DeliveryReady
// and the aggregate Ready. No message here takes a password, a token or a transport URL.
import { conditionTime, mergeConditions } from "../runtime/conditions.ts";
import { DELIVERED_KEYS } from "./transport-url.ts";

export const VHOST_READY = "VhostReady";
export const DELIVERY_READY = "DeliveryReady";
export const READY = "Ready";

export const Reason = {
  // VhostReady
  VhostProvisioned: "VhostProvisioned",
  SecretStoreNotReady: "SecretStoreNotReady",
  TopologyOperatorNotInstalled: "TopologyOperatorNotInstalled",
  WaitingForVhost: "WaitingForVhost",
  WaitingForUser: "WaitingForUser",
  VhostFailed: "VhostFailed",
  VhostError: "VhostError",
  // DeliveryReady
  Delivered: "Delivered",
  WaitingForPassword: "WaitingForPassword",
  MessagingNotPublished: "MessagingNotPublished",
  BackupNotSynced: "BackupNotSynced",
  DeliveryRefused: "DeliveryRefused",
  DeliveryError: "DeliveryError",
  // both sub-conditions
  MessagingNotDeclared: "MessagingNotDeclared",
  MessagingNotManaged: "MessagingNotManaged",
  WaitingForMessagingCredentials: "WaitingForMessagingCredentials",
  WaitingForMessaging: "WaitingForMessaging",
  ControlPlaneNotFound: "ControlPlaneNotFound",
  NamespaceNotAssigned: "NamespaceNotAssigned",
  ClusterNameTooLong: "ClusterNameTooLong",
  // Ready
  AllReady: "AllReady",
  NotAllReady: "NotAllReady",
} as const;

export type ReasonName = (typeof Reason)[keyof typeof Reason];

/** Requeue delays the reference lists. */
export const REQUEUE = {
  /** ControlPlaneNotFound, the messaging waits, SecretStoreNotReady, a held teardown. */
  short: 10_000,
  /** NamespaceNotAssigned. */
  unassigned: 60_000,
  /** TopologyOperatorNotInstalled, and the latest refresh of an order on a target cluster. */
  long: 600_000,
} as const;

/** How a cluster is named in messages. */
export function location(cluster: string): string {
  return cluster === "" ? "the management cluster" : `target cluster "${cluster}"`;
}

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

/** Every condition message of the order. */
export const messages = {
  clusterNameTooLong: (cluster: string): string =>
    `the order lives on ${location(cluster)}, whose name exceeds 63 characters and cannot be carried as a label value; nothing is provisioned for an order on that cluster`,
  controlPlaneNotFound: (cp: { namespace: string; name: string }): string =>
    `ControlPlane ${key(cp.namespace, cp.name)} not found; the order is deferred until it exists`,
  namespaceNotAssigned: (
    cp: { namespace: string; name: string },
    namespace: string,
    cluster: string,
  ): string =>
    `ControlPlane ${key(cp.namespace, cp.name)} assigns no namespace "${namespace}" on ${location(cluster)} (spec.namespaceAssignments); the order is frozen: nothing is provisioned, delivered or repaired, and what was created stays`,
  messagingNotDeclared: (cp: { namespace: string; name: string }): string =>
    `ControlPlane ${key(cp.namespace, cp.name)} declares no spec.infrastructure.messaging; a vhost is ordered on a managed bus only`,
  messagingNotManaged: (cp: { namespace: string; name: string }): string =>
    `ControlPlane ${key(cp.namespace, cp.name)} attaches to a brownfield broker through spec.infrastructure.messaging.secretRef; the operator holds no admin account on it, so a vhost is ordered on a managed bus only`,
  rabbitmqClusterMissing: (rmq: { namespace: string; name: string }): string =>
    `waiting for RabbitmqCluster ${key(rmq.namespace, rmq.name)} to exist`,
  defaultUserNotReported: (rmq: { namespace: string; name: string }): string =>
    `waiting for RabbitmqCluster ${key(rmq.namespace, rmq.name)} to report its default-user Secret (status.defaultUser.secretReference)`,
  defaultUserSecretMissing: (
    rmq: { namespace: string; name: string },
    secret: { namespace: string; name: string },
  ): string =>
    `waiting for the default-user Secret ${key(secret.namespace, secret.name)} of RabbitmqCluster ${key(rmq.namespace, rmq.name)}`,
  defaultUserSecretIncomplete: (namespace: string, secret: string, missing: readonly string[]): string =>
    `the default-user Secret ${key(namespace, secret)} lacks ${missing.map((k) => `"${k}"`).join(", ")}; waiting for it to be complete`,
  defaultUserSecretBadPort: (namespace: string, secret: string, why: string): string =>
    `the default-user Secret ${key(namespace, secret)} names no usable port: ${why}`,
  waitingForMessaging: (rmq: { namespace: string; name: string }): string =>
    `waiting for RabbitmqCluster ${key(rmq.namespace, rmq.name)} to report AllReplicasReady`,
  busReadFailed: (what: string, cause: string): string => `reading ${what} failed: ${cause}`,
  secretStoreNotReady: (why: string): string =>
    `the secret store cannot be used, so the credentials cannot be backed up: ${why}`,
  topologyOperatorNotInstalled: (): string =>
    "the management cluster serves no rabbitmq.com/v1beta1 Vhost; install the RabbitMQ Messaging Topology Operator (deploy/flux-system/releases/messaging-topology-operator.yaml) or enable vhost-broker's built-in topology controller; retried every 10 minutes",
  waitingForVhost: (vhost: string): string =>
    `waiting for the topology operator to report vhost "${vhost}" Ready`,
  waitingForUser: (user: string): string =>
    `waiting for the topology operator to report user "${user}" and its permission Ready`,
  vhostFailed: (vhost: string, operatorMessage: string): string =>
    `the topology operator cannot create vhost "${vhost}": ${operatorMessage}`,
  userFailed: (user: string, operatorMessage: string): string =>
    `the topology operator cannot create user "${user}" or its permission: ${operatorMessage}`,
  childError: (what: string, cause: string): string => `${what} failed: ${cause}`,
  notAdopted: (kind: string, namespace: string, name: string): string =>
    `refusing to adopt pre-existing ${kind} ${key(namespace, name)}: it was not created by this order`,
  vhostProvisioned: (vhost: string, user: string): string =>
    `vhost "${vhost}" is provisioned with user "${user}"`,
  vhostProvisionedRotating: (vhost: string, user: string, successor: string): string =>
    `vhost "${vhost}" is provisioned with user "${user}"; its successor "${successor}" is being created`,
  delivered: (secret: string, namespace: string, cluster: string): string =>
    `credentials are delivered in Secret "${secret}" (keys ${DELIVERED_KEYS.join(", ")}) in namespace "${namespace}" on ${location(cluster)}`,
  waitingForPassword: (): string => "waiting for a provisioned user whose password can be delivered",
  messagingNotPublished: (cp: { namespace: string; name: string }, cluster: string): string =>
    `the order lives on ${location(cluster)}, where the broker's in-cluster address does not resolve, and ControlPlane ${key(cp.namespace, cp.name)} publishes no spec.infrastructure.publishedMessagingEndpoint; the vhost is provisioned but nothing is delivered`,
  backupNotSynced: (path: string): string =>
    `waiting for the current credentials to be confirmed stored at OpenBao path "${path}"`,
  deliveryRefused: (namespace: string, secret: string): string =>
    `Secret ${key(namespace, secret)} exists and is not owned by this order; delete it or rename the order`,
  deliveryError: (what: string, cause: string): string => `${what} failed: ${cause}`,
  allReady: (): string => "the vhost is provisioned and its credentials are delivered",
} as const;

export type ConditionStatus = "True" | "False" | "Unknown";

/** A condition's content before it gets its times and generation. */
export interface ConditionState {
  status: ConditionStatus;
  reason: ReasonName;
  message: string;
}

/** metav1.Condition. */
export interface Condition extends ConditionState {
  type: string;
  observedGeneration: number;
  lastTransitionTime: string;
}

export const ok = (reason: ReasonName, message: string): ConditionState => ({
  status: "True",
  reason,
  message,
});
export const notOk = (reason: ReasonName, message: string): ConditionState => ({
  status: "False",
  reason,
  message,
});

/** The aggregate: True/AllReady when both sub-conditions are True, else False/NotAllReady naming them. */
export function aggregateReady(vhost: ConditionState, delivery: ConditionState): ConditionState {
  if (vhost.status === "True" && delivery.status === "True") return ok(Reason.AllReady, messages.allReady());
  const pending = [
    [VHOST_READY, vhost],
    [DELIVERY_READY, delivery],
  ] as const;
  const detail = pending
    .filter(([, c]) => c.status !== "True")
    .map(([type, c]) => `${type} is ${c.status} (${c.reason})`)
    .join("; ");
  return notOk(Reason.NotAllReady, detail);
}

/**
 * The three conditions of a pass. lastTransitionTime moves only when a condition's status changes,
 * as metav1 conditions require; otherwise the previous time is kept so that an unchanged status is
 * not rewritten.
 */
export function buildConditions(input: {
  vhost: ConditionState;
  delivery: ConditionState;
  generation: number;
  previous: readonly Condition[];
  now: Date;
}): Condition[] {
  const states: [string, ConditionState][] = [
    [VHOST_READY, input.vhost],
    [DELIVERY_READY, input.delivery],
    [READY, aggregateReady(input.vhost, input.delivery)],
  ];
  // runtime's merge keeps lastTransitionTime for an unchanged status and stamps the generation.
  const previous = input.previous.map((c) => ({ ...c }));
  const desired = states.map(([type, state]) => ({ type, ...state }));
  return mergeConditions(previous, desired, input.generation, input.now.getTime()) as Condition[];
}

/** True when two condition lists say the same, so the status need not be written. */
export function sameConditions(a: readonly Condition[], b: readonly Condition[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((x) => {
    const y = b.find((c) => c.type === x.type);
    return (
      y !== undefined &&
      y.status === x.status &&
      y.reason === x.reason &&
      y.message === x.message &&
      y.observedGeneration === x.observedGeneration &&
      y.lastTransitionTime === x.lastTransitionTime
    );
  });
}

/** metav1.Time's wire form: RFC 3339 in UTC with whole seconds. */
export const rfc3339 = (t: Date): string => conditionTime(t.getTime());
