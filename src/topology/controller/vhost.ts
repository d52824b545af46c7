// Vhost: name, tags, default queue type, tracing and limits; deletionPolicy retain leaves the broker's vhost.
import { listedVhost } from "../broker/listed-compare.ts";
import { VhostSchema, vhostKind, type Vhost } from "../../api/index.ts";
import { declareVhost, deleteVhost, readBackVhost, type VhostSpec } from "../broker/index.ts";
import type { ControllerDeps } from "./deps.ts";
import { topologyHandler, type KindHandler } from "./handler.ts";
import { finalizerName } from "./finalizer.ts";
import { explainVhostDeletion } from "./refusals.ts";
import type { Result } from "../../runtime/loop/controller.ts";
import { reconcileWith } from "../../external/index.ts";

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

export const vhostHandler: KindHandler<Vhost, VhostSpec> = {
  kind: vhostKind,
  schema: VhostSchema,
  secretsOf: () => [],
  desired: async (_deps, vhost) => ({ outcome: "ready", spec: vhostSpec(vhost) }),
  declare: declareVhost,
  readBack: readBackVhost,
  listed: listedVhost,
  async remove(_deps, client, vhost) {
    if (vhost.spec.deletionPolicy === "retain") return;
    await deleteVhost(client, vhost.spec.name).catch((error: unknown) => {
      throw explainVhostDeletion(error, vhost.spec.name, finalizerName(vhostKind));
    });
  },
};

export function reconcileVhost(deps: ControllerDeps, namespace: string, name: string): Promise<Result> {
  return reconcileWith(topologyHandler, vhostHandler, deps, namespace, name);
}
