// The order a backup path belongs to, as the path's KV v2 custom_metadata: what a consumer of the backup
// reads to find an order's path, or a path's order, without the operator's naming rules. Names and a
// generation only, never a credential. OpenBao refuses empty values, so the management cluster (the
// project's cluster "") is named by the word `management` and a target cluster by `target` beside its name.
import type { StoredMetadata } from "./store.ts";

export interface BackupOwner {
  /** "" for the management cluster, else the target cluster's name. */
  cluster: string;
  namespace: string;
  /** The order's kind: RabbitMQVhost, MariaDBDatabase. */
  kind: string;
  name: string;
  /** Unknown only for an order not yet read from its API server. */
  uid?: string | undefined;
  /** The password generation the path's latest version carries. */
  generation: number;
}

/** The custom_metadata of the owner's path; keys in the order docs/backup.md lists them. */
export function ownerMetadata(owner: BackupOwner): StoredMetadata {
  return {
    "managed-by": "vhost-broker",
    ...(owner.cluster === ""
      ? { cluster: "management" }
      : { cluster: "target", "target-cluster": owner.cluster }),
    namespace: owner.namespace,
    kind: owner.kind,
    name: owner.name,
    ...(owner.uid ? { uid: owner.uid } : {}),
    generation: String(owner.generation),
  };
}
