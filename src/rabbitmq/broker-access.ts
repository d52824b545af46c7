// The one way any component reaches a broker: the reference resolved as upstream resolves it
// (resolve-broker.ts), then a client from the process's one set of pools (client.ts), so every request
// has the same timeouts, CA, path prefix, metrics and write fence.
import type { Kube } from "../runtime/port/kube.ts";
import type { ManagementClient, ManagementClients } from "./client.ts";
import { kubeBrokerLookup } from "./kube-lookup.ts";
import { resolveBroker, type ClusterReference, type ResolveSettings } from "./resolve-broker.ts";

/** The process's broker clients and how references resolve (messaging domain, CA). */
export interface BrokerConnections {
  clients: ManagementClients;
  resolve: ResolveSettings;
}

export type BrokerAccess =
  | { ok: true; client: ManagementClient; key: string }
  | { ok: false; outcome: "gone" | "waiting" | "refused"; reason: string };

/** The broker `ref` names, for an object in `namespace`, read through `kube`. Reasons hold no credential. */
export async function brokerAccess(
  kube: Kube,
  ref: ClusterReference,
  namespace: string,
  broker: BrokerConnections,
): Promise<BrokerAccess> {
  const resolution = await resolveBroker(ref, namespace, kubeBrokerLookup(kube), broker.resolve);
  if (resolution.outcome !== "ready") {
    return { ok: false, outcome: resolution.outcome, reason: resolution.reason };
  }
  return { ok: true, client: broker.clients.client(resolution.connection), key: resolution.key };
}
