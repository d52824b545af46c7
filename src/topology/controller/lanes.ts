// A lane per broker for the topology kinds: an object's lane is the broker its rabbitmqClusterReference
// names, read from the cached object, so that a slow or hung broker holds only the workers of its own
// lane. An object waiting behind a slow lane gets a Warning Event naming the broker.
import type { Request } from "../../runtime/loop/controller.ts";
import type { EventSpec } from "../../runtime/port/events.ts";
import type { Kind, KubeObject } from "../../runtime/port/kube-rest.ts";
import type { SlowLane } from "../../runtime/loop/lanes.ts";
import type { ControllerSpec, Manager } from "../../runtime/process/manager.ts";

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

/** A lane per broker: each kind's workers per lane, and so many lanes at once. */
export interface TopologyLanes {
  /** Workers per lane of each kind but the Vhosts (max-concurrent-reconciles). */
  workers: number;
  brokers: number;
  /** A broker that has held a pass this long while others wait behind it is slow. */
  slowAfterMs: number;
  /** Records an Event on a cached object (not awaited: the recorder never throws). */
  record: (kind: Kind, object: KubeObject, event: EventSpec) => void;
}

/** A kind's workers and lanes: `budget` per broker, for `lanes.brokers` brokers at once. */
export function laned(
  manager: Pick<Manager, "cached">,
  kind: Kind,
  lanes: TopologyLanes,
  budget: number,
): Pick<ControllerSpec, "workers" | "lanes"> {
  const cached = (r: Request) => manager.cached(r.cluster, kind, r.namespace, r.name);
  return {
    workers: budget * lanes.brokers,
    lanes: {
      of: (r) => topologyLane(cached(r)),
      budget,
      slowAfterMs: lanes.slowAfterMs,
      slow: (r, lane) => {
        const object = cached(r);
        if (object) lanes.record(kind, object, slowLaneEvent(kind.kind, lane));
      },
    },
  };
}
