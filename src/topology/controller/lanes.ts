// A lane per broker for the topology kinds: an object's lane is the broker its rabbitmqClusterReference
// names, read from the cached object, so that a slow or hung broker holds only the workers of its own
// lane (the engine's lanes, src/external). An object waiting behind a slow lane gets a Warning Event
// naming the broker.
import { lanedBy, type EndpointLanes, type EndpointWords } from "../../external/index.ts";
import type { Kind, KubeObject } from "../../runtime/port/kube-rest.ts";
import type { Manager } from "../../runtime/process/manager.ts";
import type { ControllerSpec } from "../../runtime/process/controller-declaration.ts";

interface Reference {
  name?: unknown;
  namespace?: unknown;
  connectionSecret?: { name?: unknown };
}

const text = (value: unknown): string => (typeof value === "string" ? value : "");

/**
 * The broker of a topology object as its spec names it, resolved to a namespace as the resolver does
 * (a connectionSecret first, then the RabbitmqCluster; the object's own namespace when none is given);
 * "" for an object not cached or naming neither.
 */
export function topologyLane(object: KubeObject | undefined): string {
  const spec = object?.["spec"] as { rabbitmqClusterReference?: Reference } | undefined;
  const ref = spec?.rabbitmqClusterReference;
  if (!object || !ref) return "";
  const namespace = text(ref.namespace) || (object.metadata?.namespace ?? "");
  const secret = text(ref.connectionSecret?.name);
  if (secret) return `connection Secret ${namespace}/${secret}`;
  const name = text(ref.name);
  return name ? `RabbitmqCluster ${namespace}/${name}` : "";
}

export const brokerWords: EndpointWords = { endpoint: "broker", reason: "BrokerSlow" };

/** A kind's workers and lanes: `budget` per broker, for `lanes.endpoints` brokers at once. */
export function laned(
  manager: Pick<Manager, "cached">,
  kind: Kind,
  lanes: EndpointLanes,
  budget: number,
): Pick<ControllerSpec, "workers" | "lanes"> {
  return lanedBy(manager, kind, topologyLane, brokerWords, lanes, budget);
}
