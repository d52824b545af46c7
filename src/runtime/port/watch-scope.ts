import type { Kind } from "./kube-rest.ts";

// Which namespaces a watch caches on a cluster. A target cluster's kubeconfig Secret may limit every
// kind to its namespaces; on the management cluster, --secret-namespaces limits Secrets alone, so that
// the operator needs Secret access only there (one Role per namespace instead of a ClusterRole rule).

export interface ScopeLimits {
  /** The cluster's own list (a target cluster's `namespaces`); undefined = every namespace. */
  cluster: readonly string[] | undefined;
  /** --secret-namespaces; empty = every namespace. */
  secrets: readonly string[];
}

export const isSecretKind = (kind: Kind): boolean => kind.group === "" && kind.plural === "secrets";

/** The namespaces `kind` is limited to on the cluster `clusterName`; undefined = none. */
export function limitOf(kind: Kind, clusterName: string, limits: ScopeLimits): readonly string[] | undefined {
  if (!kind.namespaced) return undefined;
  if (clusterName === "" && isSecretKind(kind) && limits.secrets.length > 0) {
    return limits.cluster ? limits.cluster.filter((ns) => limits.secrets.includes(ns)) : limits.secrets;
  }
  return limits.cluster;
}

/**
 * The namespaces to cache for a watch: undefined is one cache of every namespace. A watch of one
 * namespace outside the limit caches nothing; a watch of every namespace gets one cache per namespace
 * of the limit.
 */
export function watchNamespaces(
  watchNamespace: string | undefined,
  limit: readonly string[] | undefined,
): (string | undefined)[] {
  if (!limit) return [watchNamespace];
  if (watchNamespace) return limit.includes(watchNamespace) ? [watchNamespace] : [];
  return [...limit];
}
