// Queue: PUT /api/queues/{vhost}/{name}. The type goes both in the body and as x-queue-type, as
// upstream sends it; a broker refuses a redeclaration that changes type, durability or arguments.
import type { DeleteOutcome, ManagementClient } from "./client.ts";
import { sameJson } from "./compare.ts";
import { apiPath, withQuery } from "./paths.ts";
import { queueSchema } from "./schemas.ts";
import { DEFAULT_VHOST, readBack, type Arguments, type QueueSpec, type ReadBack } from "./specs.ts";

function queueArguments(spec: QueueSpec): Arguments {
  return { ...spec.arguments, ...(spec.type === undefined ? {} : { "x-queue-type": spec.type }) };
}

export function queueBody(spec: QueueSpec): Record<string, unknown> {
  return {
    ...(spec.type === undefined ? {} : { type: spec.type }),
    // upstream's CRD defaults durable to true
    durable: spec.durable ?? true,
    auto_delete: spec.autoDelete ?? false,
    arguments: queueArguments(spec),
  };
}

function queuePath(spec: Pick<QueueSpec, "name" | "vhost">): string {
  return apiPath("queues", spec.vhost ?? DEFAULT_VHOST, spec.name);
}

export async function declareQueue(client: ManagementClient, spec: QueueSpec): Promise<void> {
  await client.put(queuePath(spec), queueBody(spec));
}

/** DELETE, only if empty / unused when the spec says so (the broker refuses otherwise). */
export async function deleteQueue(
  client: ManagementClient,
  spec: Pick<QueueSpec, "name" | "vhost" | "deleteIfEmpty" | "deleteIfUnused">,
): Promise<DeleteOutcome> {
  const query = {
    "if-empty": spec.deleteIfEmpty ? "true" : undefined,
    "if-unused": spec.deleteIfUnused ? "true" : undefined,
  };
  return client.delete(withQuery(queuePath(spec), query));
}

export async function readBackQueue(client: ManagementClient, spec: QueueSpec): Promise<ReadBack> {
  const path = withQuery(queuePath(spec), { columns: "name,type,durable,auto_delete,arguments" });
  const actual = await client.find(path, queueSchema);
  if (!actual) return readBack(false, []);
  const differences: string[] = [];
  if (spec.type !== undefined && actual.type !== spec.type) differences.push("type");
  if (actual.durable !== (spec.durable ?? true)) differences.push("durable");
  if (actual.auto_delete !== (spec.autoDelete ?? false)) differences.push("autoDelete");
  const actualArguments = { ...actual.arguments };
  // Without a desired type, the broker's choice (the vhost's default) is not a difference.
  if (spec.type === undefined) delete actualArguments["x-queue-type"];
  if (!sameJson(actualArguments, queueArguments(spec))) differences.push("arguments");
  return readBack(true, differences);
}
