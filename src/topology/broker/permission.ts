// Permission: a user's configure, write and read patterns on a vhost.
import type { z } from "zod";
import type { DeleteOutcome, ManagementClient } from "../../rabbitmq/client.ts";
import { ManagementTransientError } from "../../rabbitmq/errors.ts";
import { apiPath } from "../../rabbitmq/paths.ts";
import { permissionSchema, userSchema, vhostSchema } from "./schemas.ts";
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
  try {
    return await client.delete(apiPath("permissions", spec.vhost, spec.user));
  } catch (error) {
    // RabbitMQ answers 500 (no_such_user) when the user is deleted while its permission is cleared,
    // as an order's teardown deletes both at once. A user or vhost that is gone took it along.
    if (
      error instanceof ManagementTransientError &&
      error.kind === "server" &&
      (await holderGone(client, spec))
    )
      return "absent";
    throw error;
  }
}

async function holderGone(client: ManagementClient, spec: Pick<PermissionSpec, "user" | "vhost">) {
  const [user, vhost] = await Promise.all([
    client.find(apiPath("users", spec.user), userSchema),
    client.find(apiPath("vhosts", spec.vhost), vhostSchema),
  ]);
  return user === undefined || vhost === undefined;
}

export async function readBackPermission(client: ManagementClient, spec: PermissionSpec): Promise<ReadBack> {
  return comparePermission(
    spec,
    await client.find(apiPath("permissions", spec.vhost, spec.user), permissionSchema),
  );
}

/** The permission as the broker holds it against the desired state; undefined = missing. */
export function comparePermission(
  spec: PermissionSpec,
  actual: z.infer<typeof permissionSchema> | undefined,
): ReadBack {
  if (!actual) return readBack(false, []);
  const desired = permissionBody(spec);
  const differences = (["configure", "write", "read"] as const).filter((p) => actual[p] !== desired[p]);
  return readBack(true, differences);
}
