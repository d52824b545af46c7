// What the SQL reconcilers need: the engine's deps (the Kubernetes port and logger of the reconcile,
// the intervals, the per-process memo, Events, the gatekeeper), the servers (which server an object's
// mariaDbRef names, src/sql/endpoints/) and their catalogues of the period, which references are served,
// and where a Connection's Secret points. A pass that reached its server hands the kind's statements that server (ServerDeps).
import type { Kube } from "../runtime/port/kube.ts";
import type { LogSink } from "../runtime/base/logging.ts";
import {
  PeriodSnapshots,
  defaultExternalSettings,
  newExternalState,
  sharedExternalDeps,
} from "../external/index.ts";
import type { Endpoint, ExternalDeps, ExternalOptions, ExternalSettings } from "../external/index.ts";
import { readCatalogue, type Catalogue, type SqlServer, type SqlSession } from "./statements/index.ts";
import type { NamespacedName } from "./endpoints/resolve.ts";
import type { RefSelection } from "./ownership.ts";

export interface SqlSettings extends ExternalSettings {
  /** Appended to <service>.<namespace>.svc in a Connection's host, e.g. .cluster.local. */
  serviceDomain: string;
  /** The server's port, written into a Connection's Secret when the Connection names none. */
  serverPort: number;
}

export const defaultSqlSettings: SqlSettings = {
  ...defaultExternalSettings,
  serviceDomain: ".cluster.local",
  serverPort: 3306,
};

/** The server of the MariaDB a ref names (src/sql/endpoints/registry.ts), or why there is none. */
export interface ServerEndpoints {
  endpoint(kube: Kube, ref: NamespacedName): Promise<Endpoint<SqlServer>>;
}

/** One server for every ref: a test's stand-in. */
export function oneServer(server: SqlServer): ServerEndpoints {
  return { endpoint: async () => ({ outcome: "ready", client: server, key: "" }) };
}

export interface SqlDeps extends ExternalDeps {
  servers: ServerEndpoints;
  /**
   * Each server pool's catalogue of the period, which answers the verifications: a new pool (a rotated
   * administrator) reads one of its own.
   */
  catalogues: PeriodSnapshots<SqlSession, { catalogue: Catalogue }>;
  /** Which mariaDbRefs are served; off entirely when the controller is switched off. */
  refs: RefSelection;
  settings: SqlSettings;
}

/** A pass's deps once its server is resolved. */
export interface ServerDeps extends SqlDeps {
  server: SqlServer;
}

/** What outlives one reconcile: everything but the port and the logger. */
export type SharedSqlDeps = Omit<SqlDeps, "kube" | "logger">;

export function createSharedSqlDeps(
  options: ExternalOptions & {
    /** The servers by ref; `server` stands for one server for every ref. */
    servers?: ServerEndpoints;
    server?: SqlServer;
    refs: RefSelection;
    settings?: Partial<SqlSettings>;
  },
): SharedSqlDeps {
  const servers = options.servers ?? (options.server ? oneServer(options.server) : undefined);
  if (!servers) throw new Error("the SQL controller needs its servers");
  return {
    servers,
    catalogues: new PeriodSnapshots((session: SqlSession) => session, readCatalogue),
    refs: options.refs,
    ...sharedExternalDeps(options, defaultSqlSettings, newExternalState()),
  };
}

export function sqlReconcileDeps(shared: SharedSqlDeps, kube: Kube, logger: LogSink): SqlDeps {
  return { ...shared, kube, logger };
}
