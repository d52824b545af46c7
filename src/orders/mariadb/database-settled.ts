// When the order may delete its Database child: under cleanupPolicy Delete, only once a SQL controller
// has taken the object up, or the deletion would not drop the schema. Seed 002's kinds (and upstream
// mariadb-operator's) show that by putting their finalizer on it; the name differs per backend, so any
// finalizer but the API server's own counts.
import type { KubeObject } from "../../runtime/port/kube-rest.ts";

/** Finalizers Kubernetes itself sets: garbage collection's and a namespace's, and kubernetes.io/*. */
function isKubernetesFinalizer(finalizer: string): boolean {
  return (
    finalizer === "orphan" ||
    finalizer === "foregroundDeletion" ||
    finalizer === "kubernetes" ||
    finalizer.startsWith("kubernetes.io/")
  );
}

export function databaseSettled(database: KubeObject): boolean {
  const cleanup = (database["spec"] as { cleanupPolicy?: string } | undefined)?.cleanupPolicy;
  if (cleanup !== "Delete") return true;
  return (database.metadata?.finalizers ?? []).some((f) => !isKubernetesFinalizer(f));
}
