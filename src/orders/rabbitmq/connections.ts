// Who still uses a broker user: `GET /api/connections/username/{user}` on the management API lists the
// open connections that authenticated as it. It reads the broker's connection-tracking table, so it is
// current (`GET /api/connections` comes from the statistics database and lags it by up to its collection
// interval). The broker answers `[]` for a user it does not hold (RabbitMQ 3.10.8, checked on the local
// broker); a 404 therefore means the endpoint is not there (an older broker, a wrong base path) and the
// answer is that it cannot tell. Reasons name the user and a status or error code, never a credential.
import { z } from "zod";
import type { BrokerConnections } from "../../rabbitmq/broker-access.ts";
import { apiPath } from "../../rabbitmq/paths.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import type { ConnectionCount } from "../core/connections.ts";
import type { ManagedBus } from "./backend-gates.ts";
import { brokerFailure, busBroker } from "./bus-broker.ts";

const ConnectionsSchema = z.array(z.object({}));

/** How many connections of `username` the bus's broker lists now, asked as its administrator. */
export async function brokerConnections(
  kube: Kube,
  bus: ManagedBus,
  username: string,
  timeoutMs: number,
  broker: BrokerConnections,
): Promise<ConnectionCount> {
  const access = await busBroker(kube, bus, broker);
  if (!access.ok) return unknown(access.reason);
  const who = `user "${username}"`;
  try {
    const listed = await access.client.get(apiPath("connections", "username", username), ConnectionsSchema, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { known: true, count: listed.length };
  } catch (error) {
    const failure = brokerFailure(error);
    if (failure === undefined) throw error;
    return unknown(`the connections of ${who} cannot be listed on the broker's management API (${failure})`);
  }
}

const unknown = (reason: string): ConnectionCount => ({ known: false, reason });
