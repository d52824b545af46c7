// Broker users that follow an order's naming scheme but that no User of the order declares: left by a
// User whose finalizer was stripped, or by an older snapshot of the children. Every user of an order
// holds a permission on its vhost, so the vhost's permissions name them; one read per sweep finds them,
// and each is deleted (which closes its connections). The client asks the write fence before each
// DELETE. A user whose Permission went first (the sweep deletes it in the same pass) is on no such list:
// the pass names it (`known`). Reasons name users and status codes only.
import { z } from "zod";
import type { BrokerConnections } from "../../rabbitmq/broker-access.ts";
import { ManagementNotFoundError } from "../../rabbitmq/errors.ts";
import { apiPath } from "../../rabbitmq/paths.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import type { StrayRemoval } from "../core/kind.ts";
import type { ManagedBus } from "./backend-gates.ts";
import { brokerFailure, busBroker } from "./bus-broker.ts";

const PermissionsSchema = z.array(z.object({ user: z.string() }));

export async function removeStrayUsers(
  kube: Kube,
  bus: ManagedBus,
  vhost: string,
  stray: (username: string) => boolean,
  timeoutMs: number,
  broker: BrokerConnections,
  known: readonly string[] = [],
): Promise<StrayRemoval> {
  const access = await busBroker(kube, bus, broker);
  if (!access.ok) return { removed: [], failure: access.reason };
  const deadline = () => ({ signal: AbortSignal.timeout(timeoutMs) });
  let permissions: z.infer<typeof PermissionsSchema>;
  try {
    permissions = await access.client.get(
      apiPath("vhosts", vhost, "permissions"),
      PermissionsSchema,
      deadline(),
    );
  } catch (error) {
    // A vhost the broker does not hold has no users on it; those named may still exist.
    if (error instanceof ManagementNotFoundError) permissions = [];
    else {
      const failure = brokerFailure(error);
      if (failure === undefined) throw error;
      return { removed: [], failure: `listing the permissions of vhost "${vhost}" failed (${failure})` };
    }
  }
  const removed: string[] = [];
  for (const user of new Set([...permissions.map((p) => p.user), ...known].filter(stray))) {
    try {
      await access.client.delete(apiPath("users", user), deadline());
    } catch (error) {
      if (error instanceof ManagementNotFoundError) continue;
      const failure = brokerFailure(error);
      if (failure === undefined) throw error;
      return { removed, failure: `deleting user "${user}" failed (${failure})` };
    }
    removed.push(user);
  }
  return { removed };
}
