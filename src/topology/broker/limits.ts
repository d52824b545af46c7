// Vhost and user limits live at /api/{vhost,user}-limits/{owner}/{limit}: a limit that is set is
// PUT, one no longer set is DELETEd, and only the limits this module manages are touched.
import type { ManagementClient } from "../../rabbitmq/client.ts";
import { apiPath } from "../../rabbitmq/paths.ts";
import { limitsSchema } from "./schemas.ts";

export type LimitResource = "vhost-limits" | "user-limits";
/** Broker limit name (max-connections, …) to the desired value, undefined when not set. */
export type DesiredLimits = Record<string, number | undefined>;

export async function currentLimits(
  client: ManagementClient,
  resource: LimitResource,
  owner: string,
): Promise<Record<string, number>> {
  const entries = await client.get(apiPath(resource, owner), limitsSchema);
  return Object.assign({}, ...entries.map((e) => e.value)) as Record<string, number>;
}

/** The names of the managed limits whose broker value differs from the desired one. */
export function limitDifferences(desired: DesiredLimits, current: Record<string, number>): string[] {
  return Object.entries(desired)
    .filter(([name, value]) => current[name] !== value)
    .map(([name]) => `limits.${name}`);
}

export async function applyLimits(
  client: ManagementClient,
  resource: LimitResource,
  owner: string,
  desired: DesiredLimits,
): Promise<void> {
  const current = await currentLimits(client, resource, owner);
  for (const [name, value] of Object.entries(desired)) {
    if (current[name] === value) continue;
    const path = apiPath(resource, owner, name);
    if (value === undefined) await client.delete(path);
    else await client.put(path, { value });
  }
}
