// The built-in SQL controller in the manager: one controller per mariadb.osh.openstack.org kind, on
// the management cluster only. Besides its own kind, a kind watches the Secrets labelled
// k8s.mariadb.com/watch (upstream's label for a Secret whose changes must reach the server): a User's
// or a Connection's password Secret. Other Secrets are read when a pass needs them, so a change to one
// arrives with the next verification.
import { SQL_WATCH_LABEL } from "../../api/contracts.ts";
import { onManagement, secretWatch } from "../../external/index.ts";
import type { ControllerSpec, Manager, WatchSpec } from "../../runtime/process/manager.ts";
import { specOrMetadataChanged } from "../../runtime/port/predicates.ts";
import { sqlReconcileDeps, type SharedSqlDeps } from "./deps.ts";
import { sqlControllerKinds, type SqlKind } from "./kinds.ts";

export function sqlWatches(entry: SqlKind, caches: Pick<Manager, "cachedList">): WatchSpec[] {
  return [
    { kind: entry.kind, clusters: "management", update: specOrMetadataChanged },
    secretWatch(
      caches,
      entry.kind,
      SQL_WATCH_LABEL,
      (o, secret) => o.metadata?.namespace === secret.namespace && entry.secretsOf(o).includes(secret.name),
    ),
  ];
}

export function sqlControllers(
  manager: Pick<Manager, "kube" | "cachedList">,
  deps: SharedSqlDeps,
): ControllerSpec[] {
  return sqlControllerKinds.map((entry) => ({
    name: `sql-${entry.kind.plural}`,
    reconcile: onManagement(manager, (kube, log, request) =>
      entry.reconcile(sqlReconcileDeps(deps, kube, log), request.namespace, request.name),
    ),
    watches: sqlWatches(entry, manager),
  }));
}
