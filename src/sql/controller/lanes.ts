// A lane per MariaDB server for the SQL kinds: an object's lane is the MariaDB its spec.mariaDbRef names
// (namespace defaulting to the object's), read from the cached object (the engine's lanes, src/external).
import { lanedBy, type EndpointLanes, type EndpointWords } from "../../external/index.ts";
import type { Kind, KubeObject } from "../../runtime/port/kube-rest.ts";
import type { Manager } from "../../runtime/process/manager.ts";
import type { ControllerSpec } from "../../runtime/process/controller-declaration.ts";

const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** "MariaDB <namespace>/<name>" of a cached SQL object; "" for one not cached or naming no MariaDB. */
export function sqlLane(object: KubeObject | undefined): string {
  const ref = (object?.["spec"] as { mariaDbRef?: { name?: unknown; namespace?: unknown } } | undefined)
    ?.mariaDbRef;
  const name = text(ref?.name);
  if (!object || !name) return "";
  return `MariaDB ${text(ref?.namespace) || (object.metadata?.namespace ?? "")}/${name}`;
}

export const serverWords: EndpointWords = { endpoint: "server", reason: "MariaDBSlow" };

/** A kind's workers and lanes: `lanes.workers` per server, for `lanes.endpoints` servers at once. */
export function sqlLaned(
  manager: Pick<Manager, "cached">,
  kind: Kind,
  lanes: EndpointLanes,
): Pick<ControllerSpec, "workers" | "lanes"> {
  return lanedBy(manager, kind, sqlLane, serverWords, lanes);
}
