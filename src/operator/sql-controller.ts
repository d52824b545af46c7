// The built-in SQL controller in the manager: one controller per mariadb.osh.openstack.org kind, on
// the management cluster only, sharing one connection pool to the configured MariaDB server. Besides
// its own kind, a kind watches the Secrets labelled k8s.mariadb.com/watch (upstream's label for a
// Secret whose changes must reach the server): a User's or a Connection's password Secret. Other
// Secrets are read when a pass needs them, so a change to one arrives with the next verification.
import { SQL_WATCH_LABEL } from "../api/contracts.ts";
import { secretKind } from "../api/index.ts";
import type { TransitionEvents } from "../external/index.ts";
import type { Gatekeeper } from "../gatekeeper/gatekeeper.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Request } from "../runtime/controller.ts";
import { TransientError } from "../runtime/errors.ts";
import type { KubeObject } from "../runtime/kube-rest.ts";
import type { WriteFence } from "../runtime/lease-fence.ts";
import type { ControllerSpec, Manager } from "../runtime/manager.ts";
import { specOrMetadataChanged } from "../runtime/predicates.ts";
import { SettingsError } from "../runtime/settings.ts";
import {
  createSharedSqlDeps,
  refSelection,
  sqlControllerKinds,
  sqlReconcileDeps,
  type SharedSqlDeps,
} from "../sql/controller/index.ts";
import { connectServer } from "../sql/server/index.ts";
import type { MariaDBTransport } from "../mariadb/client.ts";
import { mariadbTransport } from "./mariadb.ts";
import type { ServedKinds } from "./domain-metrics.ts";
import type { OperatorConfig } from "./settings.ts";

/**
 * `fence`: asked before every statement that writes (the manager's Lease fence); `transport`: the
 * process's one way to MariaDB, shared with the MariaDBDatabase order leg.
 */
export function sqlDeps(
  config: OperatorConfig,
  clock: Clock,
  events?: TransitionEvents,
  gatekeeper?: Gatekeeper,
  fence?: WriteFence,
  transport: MariaDBTransport = mariadbTransport(config),
): SharedSqlDeps {
  const host = config["mariadb-host"];
  if (!host)
    throw new SettingsError("invalid setting mariadb-host: sql-controller needs the server's address");
  return createSharedSqlDeps({
    server: connectServer(
      {
        host,
        port: config["mariadb-port"],
        username: config["mariadb-username"],
        password: config["mariadb-password"],
        transport,
      },
      fence,
    ),
    refs: refSelection(config["sql-mariadb-refs"]),
    settings: {
      verificationPeriodMs: config["sql-verification-period"],
      waitingRetryMs: config["connection-wait-interval"],
      transientRetryMs: config["transient-requeue-interval"],
      serviceDomain: config["sql-service-domain"],
      serverPort: config["mariadb-port"],
      secretNamespaces: config["secret-namespaces"],
    },
    clock,
    ...(events ? { events } : {}),
    ...(gatekeeper ? { gatekeeper } : {}),
  });
}

function requestsFor(objects: KubeObject[]): Request[] {
  return objects.map((o) => ({
    cluster: "",
    namespace: o.metadata?.namespace ?? "",
    name: o.metadata?.name ?? "",
  }));
}

/** The SQL kinds and which objects the controller serves, for the ready gauge (domain-metrics.ts). */
export function sqlServedKinds(config: OperatorConfig): ServedKinds {
  const refs = refSelection(config["sql-mariadb-refs"]);
  const entries = new Map(sqlControllerKinds.map((entry) => [entry.kind.kind, entry]));
  return {
    kinds: sqlControllerKinds.map((entry) => entry.kind),
    serves: (kind, object) => entries.get(kind.kind)?.serves(refs, object) ?? false,
  };
}

export function sqlControllers(manager: Manager, deps: SharedSqlDeps): ControllerSpec[] {
  return sqlControllerKinds.map((entry) => ({
    name: `sql-${entry.kind.plural}`,
    reconcile: async (request, context) => {
      const kube = manager.kube("", context.signal);
      if (!kube) throw new TransientError("the management cluster is not engaged yet");
      return entry.reconcile(sqlReconcileDeps(deps, kube, context.log), request.namespace, request.name);
    },
    watches: [
      { kind: entry.kind, clusters: "management", update: specOrMetadataChanged },
      {
        kind: secretKind,
        clusters: "management",
        labelSelector: SQL_WATCH_LABEL,
        map: (secret) =>
          requestsFor(
            manager
              .cachedList("", entry.kind)
              .filter(
                (o) =>
                  o.metadata?.namespace === secret.metadata?.namespace &&
                  entry.secretsOf(o).includes(secret.metadata?.name ?? ""),
              ),
          ),
      },
    ],
  }));
}
