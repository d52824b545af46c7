// The built-in SQL controller in the manager: one controller per mariadb.osh.openstack.org kind, on
// the management cluster only, its workers in a lane per MariaDB server (lanes.ts). Besides its own
// kind, a kind watches the Secrets labelled k8s.mariadb.com/watch (upstream's label for a Secret whose
// changes must reach the server): a User's or a Connection's password Secret. Other Secrets are read
// when a pass needs them, so a change to one arrives with the next verification. It also watches the
// ControlPlanes, which declare the servers: a change wakes the objects of the MariaDB it declares, which
// resolve their server again (src/sql/servers/).
import { SQL_WATCH_LABEL } from "../../api/contracts.ts";
import { controlPlaneKind } from "../../api/index.ts";
import { managementRequests, onManagement, secretWatch } from "../../external/index.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import type { Manager } from "../../runtime/process/manager.ts";
import type { ControllerSpec, WatchSpec } from "../../runtime/process/controller-declaration.ts";
import { specOrMetadataChanged } from "../../runtime/port/predicates.ts";
import { declaringView } from "../servers/resolve.ts";
import { sqlReconcileDeps, type SharedSqlDeps } from "./deps.ts";
import { sqlControllerKinds, type SqlKind } from "./kinds.ts";
import type { EndpointLanes } from "../../external/index.ts";
import { sqlLane, sqlLaned } from "./lanes.ts";

/** The cached objects of `kind` whose mariaDbRef names the MariaDB `controlPlane` declares. */
function objectsOfControlPlane(
  caches: Pick<Manager, "cachedList">,
  entry: SqlKind,
  controlPlane: KubeObject,
) {
  const view = declaringView(controlPlane);
  if (!view?.database) return [];
  const lane = `MariaDB ${view.namespace}/${view.database.mariadb}`;
  return managementRequests(caches.cachedList("", entry.kind).filter((o) => sqlLane(o) === lane));
}

export function sqlWatches(entry: SqlKind, caches: Pick<Manager, "cachedList">): WatchSpec[] {
  return [
    { kind: entry.kind, clusters: "management", update: specOrMetadataChanged },
    secretWatch(
      caches,
      entry.kind,
      SQL_WATCH_LABEL,
      (o, secret) => o.metadata?.namespace === secret.namespace && entry.secretsOf(o).includes(secret.name),
    ),
    {
      kind: controlPlaneKind,
      clusters: "management",
      update: specOrMetadataChanged,
      map: (controlPlane) => objectsOfControlPlane(caches, entry, controlPlane),
    },
  ];
}

export function sqlControllers(
  manager: Pick<Manager, "kube" | "cachedList" | "cached">,
  deps: SharedSqlDeps,
  lanes?: EndpointLanes,
): ControllerSpec[] {
  return sqlControllerKinds.map((entry) => ({
    name: `sql-${entry.kind.plural}`,
    reconcile: onManagement(manager, (kube, log, request) =>
      entry.reconcile(sqlReconcileDeps(deps, kube, log), request.namespace, request.name),
    ),
    watches: sqlWatches(entry, manager),
    ...(lanes ? sqlLaned(manager, entry.kind, lanes) : {}),
  }));
}
