// The built-in SQL controller's dependencies, built from the settings: the servers (those ControlPlanes
// declare, and the one --mariadb-host names for the refs none declares), which objects it serves, its
// intervals, and a lane per server.
import type { EndpointLanes, TransitionEvents } from "../external/index.ts";
import type { Gatekeeper } from "../gatekeeper/gatekeeper.ts";
import type { Clock } from "../runtime/base/clock.ts";
import type { EventSpec } from "../runtime/port/events.ts";
import type { Kind, KubeObject } from "../runtime/port/kube-rest.ts";
import type { WriteFence } from "../runtime/base/write-fence.ts";
import {
  createSharedSqlDeps,
  refSelection,
  sqlControllerKinds,
  sqlServes,
  type SharedSqlDeps,
} from "../sql/index.ts";
import { connectServer } from "../sql/statements/index.ts";
import { ServerRegistry, type SettingsPassword } from "../sql/endpoints/index.ts";
import type { MariaDBTransport } from "../mariadb/client.ts";
import { SettingsError } from "../runtime/process/settings.ts";
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
  const password = settingsPassword(config);
  const servers = new ServerRegistry(
    {
      settingsServer: host
        ? {
            host,
            port: config["mariadb-port"],
            username: config["mariadb-username"],
            password,
          }
        : undefined,
      // A rotated administrator's password is read within this (at once after a refused login).
      credentialsTtlMs: config["connection-wait-interval"],
      // A pool outlives the passes of a period (objects verified once a period) before it is closed.
      idleMs: 2 * config["sql-verification-period"],
      secretNamespaces: config["secret-namespaces"],
    },
    (target) => connectServer({ ...target, transport }, fence),
    () => clock.monotonic(),
  );
  return createSharedSqlDeps({
    servers,
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

/** The password of the settings' server: the file's, re-read (a rotation without a restart), or fixed. */
export function settingsPassword(config: OperatorConfig): SettingsPassword {
  const file = config["mariadb-password-file"];
  if (!file) return { value: config["mariadb-password"] };
  if (config["mariadb-password"])
    throw new SettingsError(
      "invalid setting mariadb-password-file: mariadb-password (VHOST_BROKER_MARIADB_PASSWORD) is set too; set one of them, not both",
    );
  return { file };
}

/** A lane per server: a server that has not answered for half a statement's deadline is slow. */
export function sqlLanes(
  config: OperatorConfig,
  record: (kind: Kind, object: KubeObject, event: EventSpec) => void,
): EndpointLanes {
  return {
    workers: config["max-concurrent-reconciles"],
    endpoints: config["sql-concurrent-servers"],
    slowAfterMs: config["backend-request-timeout"] / 2,
    record,
  };
}

/** The SQL kinds and which objects the controller serves, for the ready gauge (domain-metrics.ts). */
export function sqlServedKinds(config: OperatorConfig): ServedKinds {
  return {
    kinds: sqlControllerKinds.map((entry) => entry.kind),
    serves: sqlServes(refSelection(config["sql-mariadb-refs"])),
  };
}
