// The RabbitMQVhost order kind: what the order core needs to know of the RabbitMQ leg. Its names,
// conditions and messages are seed 001's; the backend is the ControlPlane's managed bus; the container
// child is the Vhost CR and each password generation a password Secret, a User and a Permission; the
// successor logs in over AMQP before a switch; the delivered Secret carries a transport_url.
import {
  permissionKind,
  rabbitMQVhostKind,
  RabbitMQVhostSchema,
  userKind,
  vhostKind,
} from "../../api/index.ts";
import type { OrderKind, OrderObject } from "../core/kind.ts";
import { withDefaultsResolvable } from "../core/spec.ts";
import { deliveryEndpointGate, type ManagedBus } from "./bus-gates.ts";
import { applyVhost, generationListing, listChildren, performAction, pickVhostSpec } from "./children.ts";
import { eventTypes, messages, Reason, VHOST_READY } from "./conditions.ts";
import { managedBus } from "./messaging.ts";
import { successorCheck, type BusSuccessorCheck } from "./successor-check.ts";
import { RABBITMQ_NAMING, userName, vhostChildName } from "./naming.ts";
import { DELIVERED_KEYS, deliveredData } from "./transport-url.ts";

/** The managed bus as the core's backend: the RabbitmqCluster's name and the broker's address. */
export type RabbitMQBackend = ManagedBus & { name: string };

/** The kind, with the successor check the operator's settings choose (default: the stored hash). */
export const rabbitMQVhostOrder = (
  check: BusSuccessorCheck = successorCheck("hash", ""),
): OrderKind<RabbitMQBackend> => ({
  controller: "rabbitmqvhost",
  kind: rabbitMQVhostKind,
  naming: RABBITMQ_NAMING,
  parse(raw) {
    const parsed = RabbitMQVhostSchema.safeParse(withDefaultsResolvable(raw));
    return parsed.success ? (parsed.data as OrderObject) : undefined;
  },

  eventTypes,
  resourceCondition: VHOST_READY,
  resourceStatusField: "vhost",
  reasons: {
    error: Reason.VhostError,
    backendNotInstalled: Reason.TopologyOperatorNotInstalled,
    waitingForContainer: Reason.WaitingForVhost,
    containerFailed: Reason.VhostFailed,
    view: {
      VhostProvisioned: Reason.VhostProvisioned,
      WaitingForUser: Reason.WaitingForUser,
      VhostFailed: Reason.VhostFailed,
    },
  },
  messages: {
    allReady: messages.allReady,
    delivered: messages.delivered,
    backendNotInstalled: messages.topologyOperatorNotInstalled,
    waitingForContainer: messages.waitingForVhost,
    containerFailed: messages.vhostFailed,
  },

  async backend(management, controlPlane) {
    const bus = await managedBus(management, controlPlane);
    return bus.open ? { open: true, value: { ...bus.value, name: bus.value.rabbitmqCluster.name } } : bus;
  },
  deliveryEndpoint: deliveryEndpointGate,

  applyContainer: applyVhost,
  container: { kind: vhostKind, name: vhostChildName, spec: pickVhostSpec },
  async listGenerations(management, order, namespace) {
    return generationListing(await listChildren(management, order, namespace));
  },
  performAction,
  userName,
  teardownKinds: [permissionKind, userKind],

  successorCheck: check,

  deliveredKeys: DELIVERED_KEYS,
  deliveredData: ({ endpoint, resource, username, password }) =>
    deliveredData({ ...endpoint, vhost: resource, username, password }),
});
