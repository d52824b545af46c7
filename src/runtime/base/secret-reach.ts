// --secret-namespaces (the chart's rbac.secretNamespaces) limits the operator's Secrets on the
// management cluster to the namespaces listed: the chart's Roles refuse a Secret request anywhere else.
// Every controller (orders, topology, SQL) asks this one decision which namespaces an object needs
// Secrets in lie outside, before it asks the API server for a Secret there, and words it the same way.

/** The namespaces of `needed` outside `limit` (absent or empty: every namespace is in reach), each once. */
export function namespacesOutOfReach(
  limit: readonly string[] | undefined,
  needed: Iterable<string>,
): string[] {
  if (!limit || limit.length === 0) return [];
  return [...new Set(needed)].filter((ns) => !limit.includes(ns));
}

/** The start of every SecretsOutOfReach message: the namespaces, and the setting that leaves them out. */
export function outOfReachText(namespaces: readonly string[]): string {
  const where = namespaces.map((ns) => `namespace "${ns}"`).join(" and ");
  return `the operator may not use Secrets in ${where} of the management cluster (not among secret-namespaces, the chart's rbac.secretNamespaces)`;
}
