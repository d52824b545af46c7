// The RabbitMQ leg's gates: the managed bus a ControlPlane declares (its RabbitmqCluster, the
// default-user Secret, AllReplicasReady) and the address the delivered Secret names. Pure functions of
// what the reconciler read, in the shape of the core's gates.
import {
  closed,
  open,
  publishedEndpointGate,
  retryAfter,
  type ClosedGate,
  type ControlPlaneView,
  type GateResult,
  type NamespacedName,
} from "../core/gates.ts";
import { parsePort } from "../../runtime/base/port-number.ts";
import type { Endpoint } from "../core/endpoint.ts";
import type { OrderKey } from "../core/naming.ts";
import { backoff, none } from "../core/requeue.ts";
import { Reason, REQUEUE, messages, type ReasonName } from "./conditions.ts";

/** The managed bus a ControlPlane declares: its RabbitmqCluster, in the ControlPlane's namespace. */
export function messagingGate(controlPlane: ControlPlaneView): GateResult<NamespacedName> {
  const m = controlPlane.messaging;
  const refuse = (reason: ReasonName, message: string) =>
    closed<NamespacedName>({ reason, message, wake: none, scope: "both", frozen: false });
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
    closed<ManagedBus>({ reason, message, wake: retryAfter(REQUEUE.short), scope: "both", frozen: false });
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
  const message = messages.busReadFailed(what, cause);
  return {
    reason: Reason.VhostError,
    message,
    wake: backoff(message),
    scope: "both",
    frozen: false,
  };
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
  return publishedEndpointGate(order, bus.endpoint, {
    text: controlPlane.publishedMessagingEndpoint,
    what: "published messaging endpoint",
    notPublished: {
      reason: Reason.MessagingNotPublished,
      message: messages.messagingNotPublished(controlPlane, order.cluster),
    },
  });
}
