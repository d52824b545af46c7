// Permission: a user's configure, write and read patterns on a vhost.
import type { DeleteOutcome, ManagementClient } from "./client.ts";
import { apiPath } from "./paths.ts";
import { permissionSchema } from "./schemas.ts";
import { readBack, type PermissionSpec, type ReadBack } from "./specs.ts";

export function permissionBody(spec: PermissionSpec): { configure: string; write: string; read: string } {
  const { configure = "", write = "", read = "" } = spec.permissions;
  return { configure, write, read };
}

export async function declarePermission(client: ManagementClient, spec: PermissionSpec): Promise<void> {
  await client.put(apiPath("permissions", spec.vhost, spec.user), permissionBody(spec));
}

export async function deletePermission(
  client: ManagementClient,
  spec: Pick<PermissionSpec, "user" | "vhost">,
): Promise<DeleteOutcome> {
  return client.delete(apiPath("permissions", spec.vhost, spec.user));
}

export async function readBackPermission(client: ManagementClient, spec: PermissionSpec): Promise<ReadBack> {
  const actual = await client.find(apiPath("permissions", spec.vhost, spec.user), permissionSchema);
  if (!actual) return readBack(false, []);
  const desired = permissionBody(spec);
  const differences = (["configure", "write", "read"] as const).filter((p) => actual[p] !== desired[p]);
  return readBack(true, differences);
}
