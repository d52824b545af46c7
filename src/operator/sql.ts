// The built-in SQL controller's dependencies, built from the settings: one connection pool to the
// configured MariaDB server shared by every kind, which objects it serves, and its intervals.
import type { TransitionEvents } from "../external/index.ts";
import type { Gatekeeper } from "../gatekeeper/gatekeeper.ts";
import type { Clock } from "../runtime/base/clock.ts";
import type { WriteFence } from "../runtime/base/write-fence.ts";
import { SettingsError } from "../runtime/process/settings.ts";
import {
  createSharedSqlDeps,
  refSelection,
  sqlControllerKinds,
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

/** The SQL kinds and which objects the controller serves, for the ready gauge (domain-metrics.ts). */
export function sqlServedKinds(config: OperatorConfig): ServedKinds {
  const refs = refSelection(config["sql-mariadb-refs"]);
  const entries = new Map(sqlControllerKinds.map((entry) => [entry.kind.kind, entry]));
  return {
    kinds: sqlControllerKinds.map((entry) => entry.kind),
    serves: (kind, object) => entries.get(kind.kind)?.serves(refs, object) ?? false,
  };
}
