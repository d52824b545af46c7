// What the SQL reconcilers need: the engine's deps (the Kubernetes port and logger of the reconcile,
// the intervals, the per-process memo, Events, the gatekeeper), the server, which references are
// served, and where a Connection's Secret points.
import type { Kube } from "../../runtime/port/kube.ts";
import type { LogSink } from "../../runtime/base/logging.ts";
import { defaultExternalSettings, newExternalState, sharedExternalDeps } from "../../external/index.ts";
import type { ExternalDeps, ExternalOptions, ExternalSettings } from "../../external/index.ts";
import type { SqlServer } from "../server/index.ts";
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

export interface SqlDeps extends ExternalDeps {
  server: SqlServer;
  /** Which mariaDbRefs are served; off entirely when the controller is switched off. */
  refs: RefSelection;
  settings: SqlSettings;
}

/** What outlives one reconcile: everything but the port and the logger. */
export type SharedSqlDeps = Omit<SqlDeps, "kube" | "logger">;

export function createSharedSqlDeps(
  options: ExternalOptions & { server: SqlServer; refs: RefSelection; settings?: Partial<SqlSettings> },
): SharedSqlDeps {
  return {
    server: options.server,
    refs: options.refs,
    ...sharedExternalDeps(options, defaultSqlSettings, newExternalState()),
  };
}

export function sqlReconcileDeps(shared: SharedSqlDeps, kube: Kube, logger: LogSink): SqlDeps {
  return { ...shared, kube, logger };
}
