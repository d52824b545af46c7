// Vhost: name, tags, default queue type, tracing and limits; deletionPolicy retain leaves the broker's vhost.
import { listedVhost } from "../broker/listed-compare.ts";
import { VhostSchema, vhostKind, type Vhost } from "../../api/index.ts";
import {
  apiPath,
  declareVhost,
  deleteVhost,
  readBackVhost,
  type ManagementClient,
  type VhostSpec,
} from "../broker/index.ts";
import { vhostSchema } from "../broker/schemas.ts";
import type { TopologyKind } from "../backend.ts";
import { topologyFinalizer } from "../../rabbitmq/finalizer.ts";
import { ExplainedRefusal, explainVhostDeletion } from "../refusals.ts";

export function vhostSpec(vhost: Vhost): VhostSpec {
  const { spec } = vhost;
  return {
    name: spec.name,
    ...(spec.tags === undefined ? {} : { tags: spec.tags }),
    ...(spec.defaultQueueType === undefined ? {} : { defaultQueueType: spec.defaultQueueType }),
    ...(spec.tracing === undefined ? {} : { tracing: spec.tracing }),
    ...(spec.limits === undefined ? {} : { limits: spec.limits }),
  };
}

export const vhost: TopologyKind<Vhost, VhostSpec> = {
  kind: vhostKind,
  schema: VhostSchema,
  secretsOf: () => [],
  desired: async (_deps, vhost) => ({ outcome: "ready", spec: vhostSpec(vhost) }),
  async declare(client, spec) {
    await declareVhost(client, spec);
    if (spec.defaultQueueType !== undefined) await confirmDefaultQueueType(client, spec);
  },
  readBack: readBackVhost,
  listed: listedVhost,
  async remove(_deps, client, vhost) {
    if (vhost.spec.deletionPolicy === "retain") return;
    await deleteVhost(client, vhost.spec.name).catch((error: unknown) => {
      throw explainVhostDeletion(error, vhost.spec.name, topologyFinalizer(vhostKind));
    });
  },
};

/**
 * RabbitMQ 3.10 keeps the default queue type a vhost was created with: a PUT with another answers 204
 * and changes nothing (4.x changes it). Read back, so that the Vhost says so, rather than reading Ready
 * while each verification finds the difference and declares it again.
 */
async function confirmDefaultQueueType(client: ManagementClient, spec: VhostSpec): Promise<void> {
  const path = apiPath("vhosts", spec.name);
  const held = (await client.find(path, vhostSchema))?.default_queue_type;
  if (held === undefined || held === spec.defaultQueueType) return;
  throw new ExplainedRefusal(
    `PUT ${path}: the broker keeps the default queue type ${held} the vhost was created with ` +
      `(RabbitMQ 3.x sets it only when it creates the vhost): set defaultQueueType: ${held}, ` +
      "or delete the vhost on the broker so that it is created again (its queues and messages go with it)",
  );
}
