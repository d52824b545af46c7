// Vhost: PUT /api/vhosts/{name} plus its limits (max-connections, max-queues).
import type { z } from "zod";
import type { DeleteOutcome, ManagementClient } from "../../rabbitmq/client.ts";
import { sameTags } from "./compare.ts";
import { absentOnNotFound } from "../../rabbitmq/errors.ts";
import { applyLimits, currentLimits, limitDifferences, type DesiredLimits } from "./limits.ts";
import { apiPath } from "../../rabbitmq/paths.ts";
import { vhostSchema } from "./schemas.ts";
import { readBack, type ReadBack, type VhostSpec } from "./specs.ts";

export function vhostBody(spec: VhostSpec): Record<string, unknown> {
  return {
    ...(spec.description === undefined ? {} : { description: spec.description }),
    tags: (spec.tags ?? []).join(","),
    // 3.11 and later read default_queue_type; 3.10 reads defaultqueuetype. Each ignores the other.
    ...(spec.defaultQueueType === undefined
      ? {}
      : { default_queue_type: spec.defaultQueueType, defaultqueuetype: spec.defaultQueueType }),
    tracing: spec.tracing ?? false,
  };
}

function vhostLimits(spec: VhostSpec): DesiredLimits {
  return { "max-connections": spec.limits?.connections, "max-queues": spec.limits?.queues };
}

export async function declareVhost(client: ManagementClient, spec: VhostSpec): Promise<void> {
  await client.put(apiPath("vhosts", spec.name), vhostBody(spec));
  await applyLimits(client, "vhost-limits", spec.name, vhostLimits(spec));
}

export async function deleteVhost(client: ManagementClient, name: string): Promise<DeleteOutcome> {
  return client.delete(apiPath("vhosts", name));
}

export async function readBackVhost(client: ManagementClient, spec: VhostSpec): Promise<ReadBack> {
  const actual = await client.find(apiPath("vhosts", spec.name), vhostSchema);
  if (!actual) return readBack(false, []);
  const limits = await currentLimits(client, "vhost-limits", spec.name).catch(absentOnNotFound);
  return compareVhost(spec, actual, limits);
}

/** The vhost as the broker holds it (with its limits) against the desired state; undefined = missing. */
export function compareVhost(
  spec: VhostSpec,
  actual: z.infer<typeof vhostSchema> | undefined,
  limits: Record<string, number> | undefined,
): ReadBack {
  if (!actual || !limits) return readBack(false, []);
  const differences: string[] = [];
  if (!sameTags(actual.tags ?? [], spec.tags ?? [])) differences.push("tags");
  if ((actual.tracing ?? false) !== (spec.tracing ?? false)) differences.push("tracing");
  if (spec.description !== undefined && (actual.description ?? "") !== spec.description) {
    differences.push("description");
  }
  if (spec.defaultQueueType !== undefined && actual.default_queue_type !== spec.defaultQueueType) {
    differences.push("defaultQueueType");
  }
  differences.push(...limitDifferences(vhostLimits(spec), limits));
  return readBack(true, differences);
}
