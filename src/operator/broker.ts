// The process's one way to the brokers, built from its settings: the management API clients (request
// timeout, pools sized for the topology workers, the latency metric, the Lease fence) and how a
// reference resolves (messaging domain, broker CA). The topology controller and the RabbitMQ order leg
// share it.
import { readFileSync } from "node:fs";
import type { BrokerConnections } from "../rabbitmq/broker-access.ts";
import { ManagementClients, type ManagementRequestObserver } from "../rabbitmq/client.ts";
import type { WriteFence } from "../runtime/base/write-fence.ts";
import { SettingsError } from "../runtime/process/settings.ts";
import { topologyControllerKinds } from "../topology/index.ts";
import type { OperatorConfig } from "./settings.ts";

export function brokerConnections(
  config: OperatorConfig,
  observe?: ManagementRequestObserver,
  /** Asked before every write to a broker (the manager's Lease fence). */
  fence?: WriteFence,
): BrokerConnections {
  const caFile = config["broker-ca-file"];
  let ca: string | undefined;
  try {
    ca = caFile ? readFileSync(caFile, "utf8") : undefined;
  } catch (error) {
    throw new SettingsError(`invalid setting broker-ca-file: cannot read ${caFile}`, { cause: error });
  }
  const clients = new ManagementClients({
    requestTimeoutMs: config["backend-request-timeout"],
    // A connection per worker of every topology kind: a vhost's creation, which takes seconds on a
    // broker that holds a thousand vhosts, then holds up no User or Permission queued behind it.
    connectionsPerBroker:
      config["max-concurrent-reconciles"] * (topologyControllerKinds.length - 1) +
      config["topology-vhost-concurrent-reconciles"],
    ...(observe ? { observe } : {}),
    ...(fence ? { fence } : {}),
  });
  return { clients, resolve: { domain: config["messaging-domain"], ca } };
}
