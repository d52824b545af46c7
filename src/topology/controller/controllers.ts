// The built-in topology controller in the manager: one controller per rabbitmq.com kind, on the
// management cluster only, woken by what watches.ts declares, its workers in a lane per broker
// (lanes.ts). Each reconcile reads and writes through the management cluster's port, bound to its
// signal, and logs through its own logger.
import { onManagement } from "../../external/index.ts";
import type { Kind } from "../../runtime/port/kube-rest.ts";
import type { Manager } from "../../runtime/process/manager.ts";
import type { ControllerSpec } from "../../runtime/process/controller-declaration.ts";
import { reconcileDeps, type SharedDeps } from "./deps.ts";
import { topologyControllerKinds } from "./kinds.ts";
import type { EndpointLanes } from "../../external/index.ts";
import { laned } from "./lanes.ts";
import { topologyWatches, type TopologyCaches } from "./watches.ts";

/**
 * `vhostWorkers`: the Vhost kind's own number of workers (the others have the runtime's default);
 * with `lanes`, that many per broker.
 */
export function topologyControllers(
  manager: TopologyCaches & Pick<Manager, "kube" | "cached">,
  deps: SharedDeps,
  vhostWorkers?: number,
  lanes?: EndpointLanes,
): ControllerSpec[] {
  return topologyControllerKinds.map((entry) => {
    const kind = entry.kind;
    const ownWorkers = kind.kind === "Vhost" ? vhostWorkers : undefined;
    return {
      name: controllerName(kind),
      reconcile: onManagement(manager, (kube, log, request) =>
        entry.reconcile(reconcileDeps(deps, kube, log), request.namespace, request.name),
      ),
      watches: topologyWatches(entry, manager),
      ...(lanes
        ? laned(manager, kind, lanes, ownWorkers ?? lanes.workers)
        : ownWorkers !== undefined
          ? { workers: ownWorkers }
          : {}),
    };
  });
}

const controllerName = (kind: Kind) => `topology-${kind.plural}`;

/**
 * Passes at once of topology objects by memo key (`Kind/namespace/name`), each by its kind's controller,
 * in first-sweep order (a vhost before what lives in it).
 */
export function topologyWake(manager: Pick<Manager, "enqueue">): (keys: readonly string[]) => void {
  const order = topologyControllerKinds.map((entry) => entry.kind);
  return (keys) => {
    const requests = keys.map((key) => {
      const [kind = "", namespace = "", name = ""] = key.split("/");
      return { at: order.findIndex((k) => k.kind === kind), namespace, name };
    });
    for (const { at, namespace, name } of requests.sort((a, b) => a.at - b.at)) {
      const kind = order[at];
      if (kind) manager.enqueue(controllerName(kind), { cluster: "", namespace, name });
    }
  };
}
