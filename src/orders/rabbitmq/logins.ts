// How often a broker user logged in: the broker's authentication records by source
// (`GET /api/auth/attempts/{node}/source`, RabbitMQ 3.8.10 and later), summed over the cluster's nodes
// (`GET /api/nodes`). They are counters since the node started, kept only while the broker runs with
// `track_auth_attempt_source` on; records made while it was on stay when it is turned off, frozen. Each
// request to the management API is an HTTP login that a tracking node records, so the records are read
// twice: they grew between the two reads only if the node tracks now. The counts have no times: the sweep
// compares them with those read at the switch (previousPasswordLogins).
import { z } from "zod";
import type { BrokerConnections } from "../../rabbitmq/broker-access.ts";
import { apiPath } from "../../rabbitmq/paths.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import type { LoginCount } from "../core/connections.ts";
import type { ManagedBus } from "./backend-gates.ts";
import { brokerFailure, busBroker } from "./bus-broker.ts";

const NodesSchema = z.array(z.object({ name: z.string() }));
const SourcesSchema = z.array(
  z.object({
    username: z.string().optional(),
    auth_attempts: z.number().optional(),
    auth_attempts_succeeded: z.number().optional(),
  }),
);

/** Every attempt the records hold, whoever made it. */
const attempts = (sources: z.infer<typeof SourcesSchema>) =>
  sources.reduce((sum, s) => sum + (s.auth_attempts ?? 0), 0);

/** The successful logins of `username` the bus's brokers recorded, asked as their administrator. */
export async function brokerLogins(
  kube: Kube,
  bus: ManagedBus,
  username: string,
  timeoutMs: number,
  broker: BrokerConnections,
): Promise<LoginCount> {
  const access = await busBroker(kube, bus, broker);
  if (!access.ok) return { known: false, reason: access.reason };
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const nodes = await access.client.get(apiPath("nodes"), NodesSchema, { signal });
    let succeeded = 0;
    for (const node of nodes) {
      const read = () =>
        access.client.get(apiPath("auth", "attempts", node.name, "source"), SourcesSchema, { signal });
      const [first, second] = [await read(), await read()];
      if (attempts(second) <= attempts(first))
        return {
          known: false,
          reason: `the broker keeps no login records by user on node ${node.name} (track_auth_attempt_source is off)`,
        };
      for (const s of second) if (s.username === username) succeeded += s.auth_attempts_succeeded ?? 0;
    }
    return { known: true, succeeded };
  } catch (error) {
    const failure = brokerFailure(error);
    if (failure === undefined) throw error;
    return {
      known: false,
      reason: `the login records of user "${username}" cannot be read on the broker's management API (${failure})`,
    };
  }
}
