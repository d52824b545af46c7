// A lane per MariaDB server for the SQL kinds: an object's lane is the MariaDB its spec.mariaDbRef names
// (namespace defaulting to the object's), read from the cached object, so that a slow or hung server
// holds only the workers of its own lane. Objects waiting behind a slow lane get a Warning Event naming
// the server; the runtime caps how many (src/runtime/loop/controller.ts), as for the topology kinds' brokers.
import type { Request } from "../../runtime/loop/controller.ts";
import type { EventSpec } from "../../runtime/port/events.ts";
import type { Kind, KubeObject } from "../../runtime/port/kube-rest.ts";
import type { SlowLane } from "../../runtime/loop/lanes.ts";
import type { ControllerSpec, Manager } from "../../runtime/process/manager.ts";

const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** "MariaDB <namespace>/<name>" of a cached SQL object; "" for one not cached or naming no MariaDB. */
export function sqlLane(object: KubeObject | undefined): string {
  const ref = (object?.["spec"] as { mariaDbRef?: { name?: unknown; namespace?: unknown } } | undefined)
    ?.mariaDbRef;
  const name = text(ref?.name);
  if (!object || !name) return "";
  return `MariaDB ${text(ref?.namespace) || (object.metadata?.namespace ?? "")}/${name}`;
}

/** The Event of an object waiting in a slow lane: which server, and that other servers' objects go on. */
export function slowServerEvent(kind: string, lane: SlowLane): EventSpec {
  const seconds = Math.round(lane.slowForMs / 1000);
  const passes = lane.running === 1 ? "1 pass" : `${lane.running} passes`;
  return {
    type: "Warning",
    reason: "MariaDBSlow",
    action: "Waiting",
    note: `${lane.lane} is slow: ${passes} of its ${kind}s have waited ${seconds} s for it; this ${kind} waits its turn in that server's lane (${lane.waiting.length} waiting), while objects of other servers go on`,
  };
}

/** A lane per server: each kind's workers per lane, and so many lanes at once. */
export interface SqlLanes {
  /** Workers per lane (max-concurrent-reconciles). */
  workers: number;
  servers: number;
  /** A server that has held a pass this long while others wait behind it is slow. */
  slowAfterMs: number;
  /** Records an Event on a cached object (not awaited: the recorder never throws). */
  record: (kind: Kind, object: KubeObject, event: EventSpec) => void;
}

/** A kind's workers and lanes: `lanes.workers` per server, for `lanes.servers` servers at once. */
export function sqlLaned(
  manager: Pick<Manager, "cached">,
  kind: Kind,
  lanes: SqlLanes,
): Pick<ControllerSpec, "workers" | "lanes"> {
  const cached = (r: Request) => manager.cached(r.cluster, kind, r.namespace, r.name);
  return {
    workers: lanes.workers * lanes.servers,
    lanes: {
      of: (r) => sqlLane(cached(r)),
      budget: lanes.workers,
      slowAfterMs: lanes.slowAfterMs,
      slow: (r, lane) => {
        const object = cached(r);
        if (object) lanes.record(kind, object, slowServerEvent(kind.kind, lane));
      },
    },
  };
}
