// The RabbitMQVhost order kind: what the order core needs to know of the RabbitMQ leg. Its names,
// conditions and messages are seed 001's; the backend is the ControlPlane's managed bus; the container
// child is the Vhost CR and each password generation a password Secret, a User and a Permission; the
// successor is checked on the broker before a switch; the delivered Secret carries a transport_url.
import {
  permissionKind,
  rabbitmqClusterKind,
  rabbitMQVhostKind,
  RabbitMQVhostSchema,
  secretKind,
  userKind,
  vhostKind,
} from "../../api/index.ts";
import type { BrokerConnections } from "../../rabbitmq/broker-access.ts";
import { ManagementClients } from "../../rabbitmq/client.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import { topologyReadiness } from "../core/generations.ts";
import type { GateResult } from "../core/gates.ts";
import type { OrderKind } from "../core/kind.ts";
import { parseOrder } from "../core/order-schema.ts";
import { deliveryEndpointGate, type ManagedBus } from "./backend-gates.ts";
import { applyVhost, generationListing, listChildren, performAction, pickVhostSpec } from "./children.ts";
import { eventTypes, messages, Reason, VHOST_READY, viewWords } from "./conditions.ts";
import { busNamed, managedBus } from "./backend.ts";
import { brokerConnections } from "./connections.ts";
import { brokerLogins } from "./logins.ts";
import { removeStrayUsers } from "./stray-accounts.ts";
import { successorCheck, type SuccessorCheckMode } from "./successor-check.ts";
import { RABBITMQ_NAMING, userName, vhostChildName, vhostName } from "./naming.ts";
import { DELIVERED_KEYS, deliveredData } from "./delivered-data.ts";

/** The managed bus as the core's backend: the RabbitmqCluster's name and the broker's address. */
export type RabbitMQBackend = ManagedBus & { name: string };

/** The label the RabbitMQ cluster operator puts on the objects of a cluster, its default-user Secret among them. */
export const RABBITMQ_PART_OF = "app.kubernetes.io/part-of=rabbitmq";

/** The ControlPlanes in `namespace` whose managed bus is the RabbitmqCluster `name`. */
export function controlPlanesOfBus(
  controlPlanes: KubeObject[],
  namespace: string,
  name: string,
): KubeObject[] {
  return controlPlanes.filter((cp) => {
    const messaging = (cp["spec"] as { infrastructure?: { messaging?: { clusterRef?: { name?: string } } } })
      ?.infrastructure?.messaging;
    return cp.metadata?.namespace === namespace && messaging?.clusterRef?.name === name;
  });
}

export interface RabbitMQVhostOptions {
  /** How a successor is checked before the switch (default: the stored hash). */
  successorCheck?: SuccessorCheckMode | undefined;
  /**
   * The process's broker clients and resolution settings, shared with the topology controller (its
   * timeouts, CA, metrics and write fence); default: clients of their own, no domain, the system's CAs.
   */
  broker?: BrokerConnections | undefined;
}

export const rabbitMQVhostOrder = (options: RabbitMQVhostOptions = {}): OrderKind<RabbitMQBackend> =>
  rabbitMQVhostKindWith(options.successorCheck ?? "hash", options.broker ?? defaultBroker());

const asBackend = (bus: GateResult<ManagedBus>): GateResult<RabbitMQBackend> =>
  bus.open ? { open: true, value: { ...bus.value, name: bus.value.rabbitmqCluster.name } } : bus;

let ownBroker: BrokerConnections | undefined;
/** One default for every kind built without the process's clients, so their pools are shared too. */
function defaultBroker(): BrokerConnections {
  ownBroker ??= { clients: new ManagementClients(), resolve: { domain: "" } };
  return ownBroker;
}

/** What the kind is and how its conditions speak: nothing here needs the process's clients. */
const described = {
  controller: "rabbitmqvhost",
  gvk: rabbitMQVhostKind,
  naming: RABBITMQ_NAMING,
  parse: (raw) => parseOrder(RabbitMQVhostSchema, raw),

  eventTypes,
  resourceCondition: VHOST_READY,
  resourceStatusField: "vhost",
  resource: (_order, key) => vhostName(key),
  words: viewWords,
  childReadiness: topologyReadiness,
  reasons: {
    error: Reason.VhostError,
    backendNotInstalled: Reason.TopologyOperatorNotInstalled,
    waitingForContainer: Reason.WaitingForVhost,
    containerFailed: Reason.VhostFailed,
    view: {
      Provisioned: Reason.VhostProvisioned,
      WaitingForAccount: Reason.WaitingForUser,
      Failed: Reason.VhostFailed,
    },
  },
  messages: {
    allReady: messages.allReady,
    delivered: messages.delivered,
    backendNotInstalled: messages.topologyOperatorNotInstalled,
    waitingForContainer: messages.waitingForVhost,
    containerFailed: messages.vhostFailed,
  },
} satisfies Partial<OrderKind<RabbitMQBackend>>;

const rabbitMQVhostKindWith = (
  check: SuccessorCheckMode,
  broker: BrokerConnections,
): OrderKind<RabbitMQBackend> => ({
  ...described,

  // The managed bus: its readiness and its default-user Secret, from the caches.
  backendWatches: [
    {
      kind: rabbitmqClusterKind,
      controlPlanesOf: (rmq, cps) =>
        controlPlanesOfBus(cps, rmq.metadata?.namespace ?? "", rmq.metadata?.name ?? ""),
    },
    {
      kind: secretKind,
      labelSelector: RABBITMQ_PART_OF,
      controlPlanesOf: (secret, cps) =>
        controlPlanesOfBus(
          cps,
          secret.metadata?.namespace ?? "",
          secret.metadata?.labels?.["app.kubernetes.io/name"] ?? "",
        ),
    },
  ],
  async backend(management, controlPlane) {
    return asBackend(await managedBus(management, controlPlane));
  },
  async backendNamed(management, controlPlane, name) {
    const rmq = { namespace: controlPlane.namespace, name };
    if ((await management.get(rabbitmqClusterKind, rmq)) === undefined) return undefined;
    return asBackend(await busNamed(management, rmq));
  },
  backendKind: "RabbitmqCluster",
  deliveryEndpoint: deliveryEndpointGate,

  applyContainer: applyVhost,
  container: {
    gvk: vhostKind,
    name: vhostChildName,
    backendRef: "rabbitmqClusterReference",
    spec: pickVhostSpec,
    policy: (deletionPolicy) => ({ deletionPolicy }),
  },
  async listGenerations(management, order, namespace) {
    return generationListing(await listChildren(management, order, namespace));
  },
  performAction,
  userName,
  teardownKinds: [permissionKind, userKind],

  successorCheck: successorCheck(check, broker),
  connectionsOf: (management, bus, username, timeoutMs) =>
    brokerConnections(management, bus, username, timeoutMs, broker),
  loginsOf: (management, bus, username, timeoutMs) =>
    brokerLogins(management, bus, username, timeoutMs, broker),
  removeStrayAccounts: (management, bus, vhost, stray, timeoutMs, _order, known) =>
    removeStrayUsers(management, bus, vhost, stray, timeoutMs, broker, known),

  deliveredKeys: DELIVERED_KEYS,
  deliveredData: ({ endpoint, resource, username, password }) =>
    deliveredData({ ...endpoint, vhost: resource, username, password }),
});
