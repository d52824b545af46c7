// Queue: type (sent as body type and x-queue-type), durability, auto-delete and arguments; deletion
// honours deleteIfEmpty / deleteIfUnused, and deletionPolicy retain leaves the broker's queue.
import { listedQueue } from "../broker/listed-compare.ts";
import { QueueSchema, queueKind, type Queue } from "../../api/index.ts";
import { DEFAULT_VHOST, declareQueue, deleteQueue, readBackQueue, type QueueSpec } from "../broker/index.ts";
import type { TopologyKind } from "../backend.ts";
import { explainQueueDeclaration } from "../refusals.ts";

export function queueSpec(queue: Queue): QueueSpec {
  const { spec } = queue;
  return {
    name: spec.name,
    vhost: spec.vhost ?? DEFAULT_VHOST,
    ...(spec.type === undefined ? {} : { type: spec.type }),
    durable: spec.durable ?? true,
    autoDelete: spec.autoDelete ?? false,
    ...(spec.arguments === undefined ? {} : { arguments: spec.arguments }),
  };
}

export const queue: TopologyKind<Queue, QueueSpec> = {
  kind: queueKind,
  schema: QueueSchema,
  secretsOf: () => [],
  async desired(_deps, queue) {
    if (queue.spec.type === "quorum" && queue.spec.durable === false) {
      return { outcome: "invalid", reason: "a quorum queue must be durable" };
    }
    return { outcome: "ready", spec: queueSpec(queue) };
  },
  declare: (client, spec) =>
    declareQueue(client, spec).catch((error: unknown) => {
      throw explainQueueDeclaration(error);
    }),
  readBack: readBackQueue,
  listed: listedQueue,
  async remove(_deps, client, queue) {
    if (queue.spec.deletionPolicy === "retain") return;
    await deleteQueue(client, {
      ...queueSpec(queue),
      deleteIfEmpty: queue.spec.deleteIfEmpty ?? false,
      deleteIfUnused: queue.spec.deleteIfUnused ?? false,
    });
  },
};
