// A lane per broker for the topology kinds: an object's lane is the broker its rabbitmqClusterReference
// names, read from the cached object, so that a slow or hung broker holds only the workers of its own
// lane. An object waiting behind a slow lane gets a Warning Event naming the broker.
import type { EventSpec } from "../runtime/events.ts";
import type { KubeObject } from "../runtime/kube-rest.ts";
import type { SlowLane } from "../runtime/lanes.ts";

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

/** The Event of an object waiting in a slow lane: which broker, and that other brokers' objects go on. */
export function slowLaneEvent(kind: string, lane: SlowLane): EventSpec {
  const seconds = Math.round(lane.slowForMs / 1000);
  const passes = lane.running === 1 ? "1 pass" : `${lane.running} passes`;
  return {
    type: "Warning",
    reason: "BrokerSlow",
    action: "Waiting",
    note: `${lane.lane} is slow: ${passes} of its ${kind}s have waited ${seconds} s for it; this ${kind} waits its turn in that broker's lane (${lane.waiting.length} waiting), while objects of other brokers go on`,
  };
}
