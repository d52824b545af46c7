// What the SQL reconcilers need: the Kubernetes port and logger of the reconcile, the server, the
// settings and the per-process state (applied-state memo, once-per-object log).
import { createSecretKey, randomBytes, type KeyObject } from "node:crypto";
import type { KindRef, ObjectMeta } from "../../api/index.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { Condition } from "../../runtime/conditions.ts";
import type { Kube } from "../../runtime/kube.ts";
import type { LogSink } from "../../runtime/logging.ts";
import { AppliedMemo, ReportedOnce } from "../../runtime/applied-memo.ts";
import type { SqlServer } from "../server/index.ts";
import type { RefSelection } from "./ownership.ts";

export interface SqlSettings {
  /** How long an applied object is trusted before it is read back from the server and repaired (default 5 min). */
  verificationPeriodMs: number;
  /** Retry while an object waits for another (a Grant for its User) or for a Secret (default 10 s). */
  waitingRetryMs: number;
  /** Retry after the server could not be reached (default 30 s). */
  transientRetryMs: number;
  /** Appended to <service>.<namespace>.svc in a Connection's host, e.g. .cluster.local. */
  serviceDomain: string;
  /** The server's port, written into a Connection's Secret when the Connection names none. */
  serverPort: number;
  /**
   * --secret-namespaces: the only namespaces whose Secrets the operator may use; empty = every one. An
   * object that needs Secrets elsewhere is reported, never served (no request the RBAC would refuse).
   */
  secretNamespaces: readonly string[];
}

export const defaultSqlSettings: SqlSettings = {
  verificationPeriodMs: 5 * 60_000,
  waitingRetryMs: 10_000,
  transientRetryMs: 30_000,
  serviceDomain: ".cluster.local",
  serverPort: 3306,
  secretNamespaces: [],
};

/** Reports the Ready transitions as Kubernetes events; never throws. "none" records nothing. */
export interface ConditionEvents {
  record(
    kind: KindRef,
    object: { metadata: ObjectMeta },
    before: readonly Condition[] | undefined,
    after: readonly Condition[],
    type?: "Normal" | "Warning" | "none",
  ): Promise<void>;
}

export interface SqlState {
  /** Key of the desired-state HMAC (a state holds a password hash): random per process. */
  hashKey: KeyObject;
  applied: AppliedMemo;
  reported: ReportedOnce;
}

export interface SqlDeps {
  /** The management cluster, bound to the reconcile's signal. */
  kube: Kube;
  server: SqlServer;
  /** Which mariaDbRefs are served; off entirely when the controller is switched off. */
  refs: RefSelection;
  settings: SqlSettings;
  clock: Pick<Clock, "now">;
  logger: LogSink;
  state: SqlState;
  events?: ConditionEvents;
}

/** What outlives one reconcile: everything but the port and the logger. */
export type SharedSqlDeps = Omit<SqlDeps, "kube" | "logger">;

export function createSharedSqlDeps(options: {
  server: SqlServer;
  refs: RefSelection;
  settings?: Partial<SqlSettings>;
  clock?: Pick<Clock, "now">;
  events?: ConditionEvents;
}): SharedSqlDeps {
  return {
    server: options.server,
    refs: options.refs,
    settings: { ...defaultSqlSettings, ...options.settings },
    clock: options.clock ?? { now: () => Date.now() },
    state: {
      hashKey: createSecretKey(randomBytes(32)),
      applied: new AppliedMemo(),
      reported: new ReportedOnce(),
    },
    ...(options.events ? { events: options.events } : {}),
  };
}

export function sqlReconcileDeps(shared: SharedSqlDeps, kube: Kube, logger: LogSink): SqlDeps {
  return { ...shared, kube, logger };
}
