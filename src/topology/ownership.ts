// "Is this resource mine?": which rabbitmqClusterReferences the built-in controller serves. A
// resource it does not serve gets no status and no finalizer, so another controller (upstream's
// operator) can own it without the two overwriting each other.
import type { ClusterReference } from "../rabbitmq/resolve-broker.ts";
import type { ControllerDeps } from "./deps.ts";

/** Which references to a RabbitmqCluster by name are served. */
export type ClusterSelection =
  | { serve: "all" }
  | { serve: "none" }
  /** Entries are `name` (any namespace) or `namespace/name`. */
  | { serve: "names"; names: readonly string[] }
  /** The RabbitmqCluster carries `annotation` (with `value`, when given). */
  | { serve: "annotated"; annotation: string; value?: string };

export interface OwnershipSettings {
  /** Off when the upstream operator serves the seven kinds: then nothing is read or written. */
  enabled: boolean;
  clusters: ClusterSelection;
  /** Whether references through a connectionSecret are served. */
  connectionSecrets: boolean;
}

/** served: ours. declined: someone else's. undecided: the RabbitmqCluster that would decide is missing. */
export type Ownership = { decision: "served" } | { decision: "declined" | "undecided"; reason: string };

const served: Ownership = { decision: "served" };

export async function decideOwnership(
  deps: Pick<ControllerDeps, "ownership" | "lookup">,
  ref: ClusterReference,
  namespace: string,
): Promise<Ownership> {
  const settings = deps.ownership;
  if (!settings.enabled) return { decision: "declined", reason: "the built-in topology controller is off" };
  if (ref.connectionSecret) {
    return settings.connectionSecrets
      ? served
      : { decision: "declined", reason: "references through a connectionSecret are not served" };
  }
  const clusterNamespace = ref.namespace || namespace;
  const name = ref.name ?? "";
  const selection = settings.clusters;
  switch (selection.serve) {
    case "all":
      return served;
    case "none":
      return { decision: "declined", reason: "references to a RabbitmqCluster are not served" };
    case "names":
      return selection.names.includes(name) || selection.names.includes(`${clusterNamespace}/${name}`)
        ? served
        : {
            decision: "declined",
            reason: `RabbitmqCluster ${clusterNamespace}/${name} is not in the served list`,
          };
    case "annotated": {
      const cluster = await deps.lookup.cluster(clusterNamespace, name);
      if (!cluster)
        return { decision: "undecided", reason: `RabbitmqCluster ${clusterNamespace}/${name} not found` };
      const value = cluster.metadata.annotations?.[selection.annotation];
      const matches = value !== undefined && (selection.value === undefined || value === selection.value);
      return matches
        ? served
        : {
            decision: "declined",
            reason: `RabbitmqCluster ${clusterNamespace}/${name} lacks the annotation ${selection.annotation}`,
          };
    }
  }
}
