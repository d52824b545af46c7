// A lane per endpoint (a broker, a database server) for the engine's kinds: each backend names an
// object's endpoint from its cached spec, and the runtime's lanes give every endpoint the kind's
// workers, so a slow or hung endpoint holds only its own. An object waiting behind a slow lane gets a
// Warning Event naming the endpoint; the runtime caps how many (src/runtime/loop/controller.ts).
import type { Request } from "../runtime/loop/controller.ts";
import type { SlowLane } from "../runtime/loop/slow-lanes.ts";
import type { EventSpec } from "../runtime/port/events.ts";
import type { Kind, KubeObject } from "../runtime/port/kube-rest.ts";
import type { Manager } from "../runtime/process/manager.ts";
import type { ControllerSpec } from "../runtime/process/controller-declaration.ts";

export interface EndpointLanes {
  /** Workers per lane of a kind (max-concurrent-reconciles), unless the kind brings its own. */
  workers: number;
  /** How many endpoints' lanes run at once. */
  endpoints: number;
  /** An endpoint that has held a pass this long while others wait behind it is slow. */
  slowAfterMs: number;
  /** Records an Event on a cached object (not awaited: the recorder never throws). */
  record: (kind: Kind, object: KubeObject, event: EventSpec) => void;
}

/** What a backend calls its endpoint, and the reason of the slow lane's Event. */
export interface EndpointWords {
  endpoint: string;
  reason: string;
}

/** The Event of an object waiting in a slow lane: which endpoint, and that other endpoints' objects go on. */
export function slowEndpointEvent(kind: string, lane: SlowLane, words: EndpointWords): EventSpec {
  const seconds = Math.round(lane.slowForMs / 1000);
  const passes = lane.running === 1 ? "1 pass" : `${lane.running} passes`;
  const have = lane.running === 1 ? "has" : "have";
  const { endpoint } = words;
  return {
    type: "Warning",
    reason: words.reason,
    action: "Waiting",
    note: `${lane.lane} is slow: ${passes} of its ${kind}s ${have} waited ${seconds} s for it; this ${kind} waits its turn in that ${endpoint}'s lane (${lane.waiting.length} waiting), while objects of other ${endpoint}s go on`,
  };
}

/**
 * A kind's workers and lanes: `budget` per endpoint, for `lanes.endpoints` endpoints at once; `laneOf`
 * names a cached object's endpoint ("" for the common lane of an object not cached or naming none).
 */
export function lanedBy(
  manager: Pick<Manager, "cached">,
  kind: Kind,
  laneOf: (object: KubeObject | undefined) => string,
  words: EndpointWords,
  lanes: EndpointLanes,
  budget = lanes.workers,
): Pick<ControllerSpec, "workers" | "lanes"> {
  const cached = (r: Request) => manager.cached(r.cluster, kind, r.namespace, r.name);
  return {
    workers: budget * lanes.endpoints,
    lanes: {
      of: (r) => laneOf(cached(r)),
      budget,
      slowAfterMs: lanes.slowAfterMs,
      slow: (r, lane) => {
        const object = cached(r);
        if (object) lanes.record(kind, object, slowEndpointEvent(kind.kind, lane, words));
      },
    },
  };
}
