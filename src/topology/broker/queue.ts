// Queue: PUT /api/queues/{vhost}/{name}. The type goes both in the body and as x-queue-type, as
// upstream sends it; a broker refuses a redeclaration that changes type, durability or arguments.
// A quorum queue cannot be deleted with if-empty or if-unused (RabbitMQ 3.10 refuses both): as
// upstream, its counts are checked here and it is deleted without them.
import type { z } from "zod";
import type { DeleteOutcome, ManagementClient } from "../../rabbitmq/client.ts";
import { sameJson } from "./compare.ts";
import { apiPath, withQuery } from "../../rabbitmq/paths.ts";
import { QueueInUseError } from "../../rabbitmq/errors.ts";
import { queueSchema, queueUseSchema } from "./schemas.ts";
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

/**
 * DELETE, only if empty / unused when the spec says so: the broker checks a classic queue itself;
 * a quorum queue's counts are read first (the broker's type, whatever the spec says) and it is
 * deleted without the flags, or kept with a QueueInUseError. The counts are management statistics, a
 * few seconds old at most, as upstream reads them.
 */
export async function deleteQueue(
  client: ManagementClient,
  spec: Pick<QueueSpec, "name" | "vhost" | "deleteIfEmpty" | "deleteIfUnused">,
): Promise<DeleteOutcome> {
  const path = queuePath(spec);
  if (!spec.deleteIfEmpty && !spec.deleteIfUnused) return client.delete(path);
  const use = await client.find(withQuery(path, { columns: "type,messages,consumers" }), queueUseSchema);
  if (!use) return "absent";
  if (use.type !== "quorum") {
    const query = {
      "if-empty": spec.deleteIfEmpty ? "true" : undefined,
      "if-unused": spec.deleteIfUnused ? "true" : undefined,
    };
    return client.delete(withQuery(path, query));
  }
  const where = `queue '${spec.name}' in vhost '${spec.vhost ?? DEFAULT_VHOST}'`;
  if (spec.deleteIfEmpty && (use.messages ?? 0) > 0) {
    throw new QueueInUseError(
      `${where} holds ${use.messages} messages: deleteIfEmpty keeps it until it is empty (or set deleteIfEmpty to false to delete it anyway)`,
    );
  }
  if (spec.deleteIfUnused && (use.consumers ?? 0) > 0) {
    throw new QueueInUseError(
      `${where} has ${use.consumers} consumers: deleteIfUnused keeps it until it has none (or set deleteIfUnused to false to delete it anyway)`,
    );
  }
  return client.delete(path);
}

export async function readBackQueue(client: ManagementClient, spec: QueueSpec): Promise<ReadBack> {
  const path = withQuery(queuePath(spec), { columns: "name,type,durable,auto_delete,arguments" });
  return compareQueue(spec, await client.find(path, queueSchema));
}

/** The queue as the broker holds it against the desired state; undefined = missing. */
export function compareQueue(spec: QueueSpec, actual: z.infer<typeof queueSchema> | undefined): ReadBack {
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
