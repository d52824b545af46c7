// Who still uses a broker user: `GET /api/connections/username/{user}` on the management API lists the
// open connections that authenticated as it. It reads the broker's connection-tracking table, so it is
// current (`GET /api/connections` comes from the statistics database and lags it by up to its collection
// interval). The broker answers `[]` for a user it does not hold (RabbitMQ 3.10.8, checked on the local
// broker); a 404 therefore means the endpoint is not there (an older broker, a wrong base path) and the
// answer is that it cannot tell. Reasons name the user and a status or error code, never a credential.
import { z } from "zod";
import type { Kube } from "../../runtime/kube.ts";
import type { ConnectionCount } from "../core/connections.ts";
import type { ManagedBus } from "./bus-gates.ts";
import { managementApi } from "./management.ts";

const ConnectionsSchema = z.array(z.object({}));

/** How many connections of `username` the bus's broker lists now, asked as its administrator. */
export async function brokerConnections(
  kube: Kube,
  bus: ManagedBus,
  username: string,
  timeoutMs: number,
  messagingDomain: string,
): Promise<ConnectionCount> {
  const api = await managementApi(kube, bus, messagingDomain);
  if (!api.ok) return unknown(api.reason);
  const who = `user "${username}"`;
  const answer = await api.get(`api/connections/username/${encodeURIComponent(username)}`, timeoutMs);
  if (!answer.ok) {
    return unknown(
      `the broker's management API cannot be reached to list the connections of ${who} (${answer.why})`,
    );
  }
  const response = answer.response;
  if (!response.ok) {
    await response.arrayBuffer();
    return unknown(
      `the broker's management API answered HTTP ${response.status} for the connections of ${who}`,
    );
  }
  const body: unknown = await response.json().catch(() => undefined);
  const parsed = ConnectionsSchema.safeParse(body);
  if (!parsed.success) {
    return unknown(`the broker's management API answered no list of connections for ${who}`);
  }
  return { known: true, count: parsed.data.length };
}

const unknown = (reason: string): ConnectionCount => ({ known: false, reason });
