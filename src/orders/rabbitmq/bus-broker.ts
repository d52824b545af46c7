// The managed bus's broker, reached as every component reaches a broker (src/rabbitmq/broker-access.ts):
// the ControlPlane's RabbitmqCluster as a rabbitmqClusterReference in its own namespace, so the
// connection-uri annotation (with or without a scheme), the Service's management or management-tls
// port, management.path_prefix and the broker CA apply here as in the topology controller.
import { brokerAccess, type BrokerAccess, type BrokerConnections } from "../../rabbitmq/broker-access.ts";
import {
  ManagementApiError,
  ManagementResponseError,
  ManagementTransientError,
} from "../../rabbitmq/errors.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import type { ManagedBus } from "./backend-gates.ts";

export function busBroker(kube: Kube, bus: ManagedBus, broker: BrokerConnections): Promise<BrokerAccess> {
  const { namespace, name } = bus.rabbitmqCluster;
  return brokerAccess(kube, { name, namespace }, namespace, broker);
}

/**
 * A management API failure in words for a condition (the client scrubs the credentials out of them),
 * or undefined for anything else, which the caller rethrows: the write fence's refusal among them.
 */
export function brokerFailure(error: unknown): string | undefined {
  if (error instanceof ManagementApiError) return `HTTP ${error.status} ${error.reason}`.slice(0, 300);
  if (error instanceof ManagementTransientError) {
    return error.message.slice(`${error.method} ${error.path}: `.length).slice(0, 300);
  }
  if (error instanceof ManagementResponseError) return error.message.slice(0, 300);
  return undefined;
}
