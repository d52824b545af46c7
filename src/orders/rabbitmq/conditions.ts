// The RabbitMQVhost order's conditions: seed 001's table, the order machinery's reasons (core) joined
// with the RabbitMQ leg's own, every message the order writes (the reference's verbatim where it gives
// them), and the builder of VhostReady, DeliveryReady and the aggregate Ready. No message here takes a
// password, a token or a transport URL.
import {
  aggregateReady as coreAggregate,
  CoreReason,
  coreMessages,
  location,
  orderConditions,
  type Condition,
} from "../core/conditions.ts";
import type { ConditionState as CoreConditionState } from "../core/types.ts";
import type { ViewWords } from "../core/generations.ts";
import { DELIVERED_KEYS } from "./delivered-data.ts";

export {
  DELIVERY_READY,
  READY,
  REQUEUE,
  location,
  notOk,
  ok,
  rfc3339,
  sameConditions,
  type Condition,
} from "../core/conditions.ts";

export const VHOST_READY = "VhostReady";

export const Reason = {
  ...CoreReason,
  // VhostReady
  VhostProvisioned: "VhostProvisioned",
  TopologyOperatorNotInstalled: "TopologyOperatorNotInstalled",
  WaitingForVhost: "WaitingForVhost",
  WaitingForUser: "WaitingForUser",
  VhostFailed: "VhostFailed",
  VhostError: "VhostError",
  // DeliveryReady
  MessagingNotPublished: "MessagingNotPublished",
  // both sub-conditions
  MessagingNotDeclared: "MessagingNotDeclared",
  MessagingNotManaged: "MessagingNotManaged",
  WaitingForMessagingCredentials: "WaitingForMessagingCredentials",
  WaitingForMessaging: "WaitingForMessaging",
} as const;

export type ReasonName = (typeof Reason)[keyof typeof Reason];

/**
 * The leg's reasons whose False transition is no Warning event: waits on the bus or the topology
 * operator are Normal, a failed child write (retried with backoff) makes none. The others (a missing
 * ControlPlane, a refused vhost, a bus that is not managed...) need a person: Warning.
 */
export const eventTypes = {
  WaitingForVhost: "Normal",
  WaitingForUser: "Normal",
  WaitingForMessaging: "Normal",
  WaitingForMessagingCredentials: "Normal",
  VhostError: "none",
} as const satisfies Partial<Record<ReasonName, "Normal" | "none">>;

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

/** Every condition message of the order. */
export const messages = {
  ...coreMessages,
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
  vhostProvisioned: (vhost: string, user: string): string =>
    `vhost "${vhost}" is provisioned with user "${user}"`,
  vhostProvisionedRotating: (vhost: string, user: string, successor: string): string =>
    `vhost "${vhost}" is provisioned with user "${user}"; its successor "${successor}" is being created`,
  delivered: (secret: string, namespace: string, cluster: string): string =>
    `credentials are delivered in Secret "${secret}" (keys ${DELIVERED_KEYS.join(", ")}) in namespace "${namespace}" on ${location(cluster)}`,
  messagingNotPublished: (cp: { namespace: string; name: string }, cluster: string): string =>
    `the order lives on ${location(cluster)}, where the broker's in-cluster address does not resolve, and ControlPlane ${key(cp.namespace, cp.name)} publishes no spec.infrastructure.publishedMessagingEndpoint; the vhost is provisioned but nothing is delivered`,
  allReady: (): string => "the vhost is provisioned and its credentials are delivered",
} as const;

/** How VhostReady's messages name the pieces of a RabbitMQVhost. */
export const viewWords: ViewWords = {
  operator: "the topology operator",
  resource: "vhost",
  accountKind: "User",
  access: "permission",
  accessKind: "Permission",
  backend: "the broker",
  pieces: { passwordSecret: "passwordSecret", account: "user", access: "permission" },
};

export type ConditionState = CoreConditionState & { reason: ReasonName };

/** The aggregate: True/AllReady when both sub-conditions are True, else False/NotAllReady naming them. */
export function aggregateReady(vhost: ConditionState, delivery: ConditionState): ConditionState {
  return coreAggregate({ type: VHOST_READY, state: vhost }, delivery, messages.allReady()) as ConditionState;
}

/** The three conditions of a pass (see orderConditions). */
export function buildConditions(input: {
  vhost: ConditionState;
  delivery: ConditionState;
  generation: number;
  previous: readonly Condition[];
  now: Date;
}): Condition[] {
  return orderConditions({
    resourceType: VHOST_READY,
    resource: input.vhost,
    delivery: input.delivery,
    allReady: messages.allReady(),
    generation: input.generation,
    previous: input.previous,
    now: input.now,
  });
}
