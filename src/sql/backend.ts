// The SQL backend, the mariadb.osh.openstack.org kinds' connector to the engine (src/external/):
// controllers named sql-<plural>, objects served by their mariaDbRef (ownership.ts), the finalizer
// cleanupPolicy Delete asks for, the one server the mariaDbRef names (src/sql/endpoints/), the
// verification from the server's catalogue of the period, spec.retryInterval, the fields that cannot
// be honoured, the server's failures, seed 002's Ready condition, and a lane per server. Besides its
// own kind, a kind watches the Secrets labelled k8s.mariadb.com/watch (upstream's label for a Secret
// whose changes must reach the server: a User's or a Connection's password Secret); other Secrets are
// read when a pass needs them, so a change to one arrives with the next verification. It also watches
// the ControlPlanes, which declare the servers: a change wakes the objects of the MariaDB it declares,
// which resolve their server again. Each kind (kinds/) supplies a SqlKind.
import type { z } from "zod";
import { SQL_WATCH_LABEL } from "../api/contracts.ts";
import { SqlReason, controlPlaneKind, type KindRef, type ObjectMeta } from "../api/index.ts";
import {
  externalControllers,
  type AnyExternalKind,
  type Caches,
  type Connector,
  type Desired,
  type EndpointLanes,
  type ExternalKind,
} from "../external/index.ts";
import type { Condition, DesiredCondition } from "../runtime/base/conditions.ts";
import { parseDuration } from "../runtime/base/duration.ts";
import type { KubeObject } from "../runtime/port/kube-rest.ts";
import { specOrMetadataChanged } from "../runtime/port/predicates.ts";
import type { ControllerSpec } from "../runtime/process/controller-declaration.ts";
import type { Manager } from "../runtime/process/manager.ts";
import { sqlFailure, type Catalogue, type SqlServer } from "./statements/index.ts";
import { declaringView, refKey } from "./endpoints/resolve.ts";
import { applyOnServer } from "./sync.ts";
import { sqlReconcileDeps, type ServerDeps, type SharedSqlDeps, type SqlDeps } from "./deps.ts";
import { connection } from "./kinds/connection.ts";
import { database } from "./kinds/database.ts";
import { grant } from "./kinds/grant.ts";
import { user } from "./kinds/user.ts";
import { decideOwnership, type RefSelection, type Reference } from "./ownership.ts";

/** The reasons live in the API, where the orders that read these kinds find them too. */
export const Reason = SqlReason;

/** Seed 002's Ready condition: Reconciled, ReconcileError or NotOwned. */
export const ready = (message: string): DesiredCondition => ({
  type: "Ready",
  status: "True",
  reason: Reason.Reconciled,
  message,
});

export const notReady = (message: string, reason: string = Reason.ReconcileError): DesiredCondition => ({
  type: "Ready",
  status: "False",
  reason,
  message,
});

export interface SqlStatus {
  conditions?: Condition[] | undefined;
}

export interface SqlObject {
  metadata: ObjectMeta;
  /** Database, User and Grant have cleanupPolicy and retryInterval; a Connection has neither. */
  spec: object;
  status?: SqlStatus | undefined;
}

function specField(object: SqlObject, field: "cleanupPolicy" | "retryInterval"): string | undefined {
  const value = (object.spec as Record<string, unknown>)[field];
  return typeof value === "string" ? value : undefined;
}

/** What a pass did on the server: the Ready message, and what it had to write (empty: nothing). */
export interface Applied {
  message: string;
  changed: string[];
}

/** What a SQL kind supplies: its schema, reference, and statements. */
export interface SqlKind<O extends SqlObject, S> {
  kind: KindRef;
  schema: z.ZodType<O>;
  /** The reference ownership is decided by. */
  reference(object: O): Reference | undefined;
  /** The first field set to something the controller would not honour, e.g. "spec.passwordPlugin". */
  unsupported(object: O): string | undefined;
  /** Secrets beside the object whose change must re-reconcile it. */
  secretsOf(object: O): string[];
  /** Whether it always reads or writes Secrets in its own namespace (a Connection's Secret). */
  ownSecrets?: boolean;
  desired(deps: SqlDeps, object: O): Promise<Desired<S>>;
  /**
   * The Ready message when the server's catalogue shows `spec` as it is, undefined when it differs
   * (then `apply` reads back on its own and writes); absent for a kind the catalogue cannot answer.
   */
  listed?(catalogue: Catalogue, spec: S): string | undefined;
  /** Brings the server (and for a Connection its Secret) to `spec`: reads back, writes what differs. */
  apply(deps: ServerDeps, object: O, spec: S): Promise<Applied>;
  /** Drops what the object declared, for cleanupPolicy Delete; absent for a kind without one. */
  remove?(deps: ServerDeps, object: O): Promise<void>;
}

/** The finalizer a resource carries under cleanupPolicy Delete only (none under Skip, the default). */
export function finalizerName(kind: KindRef): string {
  return `${kind.group}/${kind.kind.toLowerCase()}-cleanup`;
}

const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** "MariaDB <namespace>/<name>" of a cached SQL object; "" for one not cached or naming no MariaDB. */
export function sqlLane(object: KubeObject | undefined): string {
  const ref = (object?.["spec"] as { mariaDbRef?: { name?: unknown; namespace?: unknown } } | undefined)
    ?.mariaDbRef;
  const name = text(ref?.name);
  if (!object || !name) return "";
  return `MariaDB ${text(ref?.namespace) || (object.metadata?.namespace ?? "")}/${name}`;
}

/** The cached objects whose mariaDbRef names the MariaDB `controlPlane` declares. */
function declaredBy(controlPlane: KubeObject): (object: KubeObject) => boolean {
  const view = declaringView(controlPlane);
  const lane = view?.database ? `MariaDB ${view.namespace}/${view.database.mariadb}` : undefined;
  return (object) => lane !== undefined && sqlLane(object) === lane;
}

export const sql: Connector<SqlDeps> = {
  name: "sql",
  controller: "built-in SQL controller",
  endpointName: "server",
  reasons: { invalidSpec: Reason.ReconcileError, outOfReach: Reason.SecretsOutOfReach },
  // lastTransitionTime moves only when the status changes; observedGeneration sits in the condition;
  // other conditions (someone else's) are kept.
  status: { keepOthers: true, generationAt: "conditions", observedOnSuccess: false },
  enabled: () => true,
  // A deletion needs no Secret (dropping an account or a database does not read its password).
  teardownReadsSecrets: false,
  outOfReachNote: "nothing is declared on the server and no finalizer is added until it is listed",
  failure(deps, error, secrets, teardown) {
    const failure = sqlFailure(error, secrets);
    if (!failure) return undefined;
    const { settings } = deps;
    if (teardown) {
      return {
        verdict: "failed",
        message: `dropping on the server failed: ${failure.message}; the finalizer ${teardown.finalizer} stays until it succeeds (remove it to keep the object on the server)`,
        retryAfterMs: settings.transientRetryMs,
      };
    }
    switch (failure.kind) {
      // Something in the way is someone else's (a Secret of that name, an account): left alone, said so.
      case "notOwned":
        return {
          verdict: "waiting",
          message: failure.message,
          retryAfterMs: settings.waitingRetryMs,
          conditionReason: Reason.NotOwned,
        };
      // A missing dependency (the account of a Grant, say) waits and is tried again, as seed 002's sweeps do.
      case "missing":
        return { verdict: "waiting", message: failure.message, retryAfterMs: settings.waitingRetryMs };
      case "unreachable":
        return { verdict: "failed", message: failure.message, retryAfterMs: settings.transientRetryMs };
      // The server's validation policy refused the password: a new password answers it, not a retry.
      case "passwordRefused":
        return { verdict: "refused", message: failure.message, conditionReason: Reason.PasswordRefused };
      default:
        return { verdict: "refused", message: failure.message };
    }
  },
  secretLabel: SQL_WATCH_LABEL,
  quietOwnFinalizer: false,
  endpointObject: { kind: controlPlaneKind, update: specOrMetadataChanged, wakes: declaredBy },
  lane: { of: sqlLane, words: { endpoint: "server", reason: "MariaDBSlow" } },
};

/** The engine's kind of a SQL kind. */
function asExternal<O extends SqlObject, S>(kind: SqlKind<O, S>): ExternalKind<SqlDeps, O, S, SqlServer> {
  const dropping = (object: O) =>
    kind.remove !== undefined && specField(object, "cleanupPolicy") === "Delete";
  return {
    connector: sql,
    kind: kind.kind,
    schema: kind.schema,
    finalizer: finalizerName(kind.kind),
    conditions: {
      ready: (detail) => [ready(detail ?? "")],
      notReady,
      notDeleted: (message) => notReady(message),
    },
    ownership: async (deps, object) =>
      decideOwnership(deps.refs, kind.reference(object), object.metadata.namespace ?? ""),
    // Only cleanupPolicy Delete holds the object; a policy changed back to Skip lets it go.
    wantsFinalizer: dropping,
    // Its own, for a kind that keeps Secrets beside it (a Connection's) or an object that names one (a
    // User's password Secret). The server's administrator comes from the settings, never from a Secret.
    secretNamespaces: (object) =>
      kind.ownSecrets || kind.secretsOf(object).length > 0 ? [object.metadata.namespace ?? ""] : [],
    secretsOf: (raw) => {
      const parsed = kind.schema.safeParse(raw);
      if (!parsed.success) return [];
      const namespace = parsed.data.metadata.namespace ?? "";
      return kind.secretsOf(parsed.data).map((name) => ({ namespace, name }));
    },
    retryInterval: (object) => {
      const text = specField(object, "retryInterval");
      const own = text ? parseDuration(text) : undefined;
      return own !== undefined && own > 0 ? own : undefined;
    },
    unsupported: (object) => {
      const field = kind.unsupported(object);
      return (
        field &&
        `${field} is set to something the built-in SQL controller does not honour; remove it, or let upstream's mariadb-operator serve this object`
      );
    },
    // The server the object's mariaDbRef names (src/sql/endpoints/): a ControlPlane's, or the settings'.
    endpoint: (deps, object) =>
      deps.servers.endpoint(deps.kube, refKey(kind.reference(object), object.metadata.namespace ?? "")),
    desired: (deps, object) => kind.desired(deps, object),
    sync: (deps, server, object, desired, recall) =>
      applyOnServer(kind, deps, server, object, desired.spec, recall.known),
    async remove(deps, server, object) {
      if (!kind.remove || !dropping(object)) return;
      const { namespace, name } = object.metadata;
      try {
        await kind.remove({ ...deps, server }, object);
        deps.logger.info(
          { kind: kind.kind.kind, namespace, name },
          "dropped on the server (cleanupPolicy Delete)",
        );
      } catch (error) {
        // Already gone (an account dropped with its grants) is what the deletion asked for.
        const failure = sqlFailure(error, []);
        if (failure?.kind !== "missing" && failure?.kind !== "notOwned") throw error;
      }
    },
  };
}

/** The four kinds, by name. */
export const sqlKind = {
  database: asExternal(database),
  user: asExternal(user),
  grant: asExternal(grant),
  connection: asExternal(connection),
};

/**
 * In the order of seed 002's sweep: a Grant needs its account, a Connection its grant. Across kinds
 * nothing is read: a pass that fails for want of another object waits and tries again (the server is
 * the source of truth).
 */
export const sqlControllerKinds: readonly AnyExternalKind<SqlDeps, SqlServer>[] = [
  sqlKind.database,
  sqlKind.user,
  sqlKind.grant,
  sqlKind.connection,
];

/** The built-in SQL controller in the manager: one controller per kind, with `lanes` a lane per server. */
export function sqlControllers(
  manager: Caches & Pick<Manager, "kube" | "cached">,
  deps: SharedSqlDeps,
  lanes?: EndpointLanes,
): ControllerSpec[] {
  return externalControllers(manager, sqlControllerKinds, (kube, log) => sqlReconcileDeps(deps, kube, log), {
    lanes,
  });
}

/** Whether the controller serves an object (as an informer holds it) of a SQL kind under `refs`. */
export function sqlServes(refs: RefSelection): (kind: KindRef, object: unknown) => boolean {
  const byKind = new Map<string, (object: unknown) => boolean>([
    [database.kind.kind, (object) => serves(database, refs, object)],
    [user.kind.kind, (object) => serves(user, refs, object)],
    [grant.kind.kind, (object) => serves(grant, refs, object)],
    [connection.kind.kind, (object) => serves(connection, refs, object)],
  ]);
  return (kind, object) => byKind.get(kind.kind)?.(object) ?? false;
}

function serves<O extends SqlObject, S>(kind: SqlKind<O, S>, refs: RefSelection, object: unknown): boolean {
  const parsed = kind.schema.safeParse(object);
  if (!parsed.success) return false;
  const namespace = parsed.data.metadata.namespace ?? "";
  return decideOwnership(refs, kind.reference(parsed.data), namespace).decision === "served";
}
