// Broker users that follow an order's naming scheme but that no User of the order declares: left by a
// User whose finalizer was stripped, or by an older snapshot of the children. Every user of an order
// holds a permission on its vhost, so the vhost's permissions name them; one read per sweep finds them,
// and each is deleted (which closes its connections). Reasons name users and status codes only.
import { z } from "zod";
import type { Kube } from "../../runtime/kube.ts";
import type { WriteFence } from "../../runtime/lease-fence.ts";
import type { StrayRemoval } from "../core/kind.ts";
import type { ManagedBus } from "./bus-gates.ts";
import { managementApi } from "./management.ts";

const PermissionsSchema = z.array(z.object({ user: z.string() }));

export async function removeStrayUsers(
  kube: Kube,
  bus: ManagedBus,
  vhost: string,
  stray: (username: string) => boolean,
  timeoutMs: number,
  messagingDomain: string,
  fence?: WriteFence,
): Promise<StrayRemoval> {
  const api = await managementApi(kube, bus, messagingDomain, fence);
  if (!api.ok) return { removed: [], failure: api.reason };
  const listed = await api.get(`api/vhosts/${encodeURIComponent(vhost)}/permissions`, timeoutMs);
  if (!listed.ok)
    return { removed: [], failure: `listing the permissions of vhost "${vhost}" failed (${listed.why})` };
  if (!listed.response.ok) {
    await listed.response.arrayBuffer();
    // A vhost the broker does not hold has no users on it.
    if (listed.response.status === 404) return { removed: [] };
    return {
      removed: [],
      failure: `listing the permissions of vhost "${vhost}" answered HTTP ${listed.response.status}`,
    };
  }
  const parsed = PermissionsSchema.safeParse(await listed.response.json().catch(() => undefined));
  if (!parsed.success) return { removed: [], failure: `the permissions of vhost "${vhost}" are no list` };
  const removed: string[] = [];
  for (const user of new Set(parsed.data.map((p) => p.user).filter(stray))) {
    const deleted = await api.get(`api/users/${encodeURIComponent(user)}`, timeoutMs, "DELETE");
    if (!deleted.ok) return { removed, failure: `deleting user "${user}" failed (${deleted.why})` };
    await deleted.response.arrayBuffer();
    if (!deleted.response.ok && deleted.response.status !== 404) {
      return { removed, failure: `deleting user "${user}" answered HTTP ${deleted.response.status}` };
    }
    removed.push(user);
  }
  return { removed };
}
