// The four SQL kinds as handlers of the engine of resources outside Kubernetes (src/external/): what
// every kind shares (ownership by mariaDbRef, the finalizer cleanupPolicy Delete asks for, the one
// server its mariaDbRef names, spec.retryInterval, the fields that cannot be honoured, the server's failures and
// seed 002's Ready condition), around what each kind supplies in a SqlHandler.
import type { z } from "zod";
import type { KindRef, ObjectMeta } from "../../api/index.ts";
import { type Desired, type ExternalHandler } from "../../external/index.ts";
import { parseDuration } from "../../runtime/base/duration.ts";
import { sqlFailure, type Catalogue, type SqlServer } from "../server/index.ts";
import { Reason, nextStatus, notReady, ready, type SqlStatus } from "./conditions.ts";
import type { ServerDeps, SqlDeps } from "./deps.ts";
import { refKey } from "../servers/resolve.ts";
import { finalizerName } from "./finalizer.ts";
import { decideOwnership, type Reference } from "./ownership.ts";

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

export interface SqlHandler<O extends SqlObject, S> {
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

export type SqlEngineHandler<O extends SqlObject, S> = ExternalHandler<SqlDeps, O, S, SqlServer>;

/** The engine's handler of a SQL kind. */
export function sqlHandler<O extends SqlObject, S>(kind: SqlHandler<O, S>): SqlEngineHandler<O, S> {
  const finalizer = finalizerName(kind.kind);
  const dropping = (object: O) =>
    kind.remove !== undefined && specField(object, "cleanupPolicy") === "Delete";
  return {
    kind: kind.kind,
    schema: kind.schema,
    controller: "built-in SQL controller",
    endpointName: "server",
    finalizer,
    reasons: { invalidSpec: Reason.ReconcileError, outOfReach: Reason.SecretsOutOfReach },
    conditions: {
      ready: (detail) => [ready(detail ?? "")],
      notReady: (message, reason) => notReady(message, reason),
      notDeleted: (message) => notReady(message),
      next: (current, updates, generation, nowMs) =>
        nextStatus(
          current as SqlStatus | undefined,
          updates.map((u) => ({ ...u, message: u.message ?? "" })),
          generation,
          nowMs,
        ) as Record<string, unknown>,
    },
    enabled: () => true,
    ownership: async (deps, object) =>
      decideOwnership(deps.refs, kind.reference(object), object.metadata.namespace ?? ""),
    // Only cleanupPolicy Delete holds the object; a policy changed back to Skip lets it go.
    wantsFinalizer: dropping,
    // Its own, for a kind that keeps Secrets beside it (a Connection's) or an object that names one (a
    // User's password Secret). The server's administrator comes from the settings, never from a Secret.
    secretNamespaces: (object) =>
      kind.ownSecrets || kind.secretsOf(object).length > 0 ? [object.metadata.namespace ?? ""] : [],
    // A deletion needs no Secret (dropping an account or a database does not read its password).
    teardownReadsSecrets: false,
    outOfReachNote: "nothing is declared on the server and no finalizer is added until it is listed",
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
    // The server the object's mariaDbRef names (src/sql/servers/): a ControlPlane's, or the settings'.
    endpoint: (deps, object) =>
      deps.servers.endpoint(deps.kube, refKey(kind.reference(object), object.metadata.namespace ?? "")),
    desired: (deps, object) => kind.desired(deps, object),
    async sync(deps, server, object, desired, recall) {
      // A verification of what this process applied is answered from the server's catalogue of the
      // period; only what it shows as different is read back and written on its own.
      if (recall.known && kind.listed) {
        const { catalogue, startedAt } = await deps.catalogues.read(
          server,
          deps.clock.monotonic(),
          deps.settings.verificationPeriodMs,
        );
        const detail = kind.listed(catalogue, desired.spec);
        if (detail !== undefined) return { detail, verifiedAt: startedAt };
      }
      const applied = await kind.apply({ ...deps, server }, object, desired.spec);
      if (applied.changed.length > 0) {
        const { namespace, name } = object.metadata;
        deps.logger.info(
          { kind: kind.kind.kind, namespace, name, changed: applied.changed },
          recall.known ? "drift: repaired on the server" : "declared on the server",
        );
      }
      return { detail: applied.message };
    },
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
    failure(deps, error, secrets, teardown) {
      const failure = sqlFailure(error, secrets);
      if (!failure) return undefined;
      const { settings } = deps;
      if (teardown) {
        return {
          verdict: "failed",
          message: `dropping on the server failed: ${failure.message}; the finalizer ${finalizer} stays until it succeeds (remove it to keep the object on the server)`,
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
        default:
          return { verdict: "refused", message: failure.message };
      }
    },
  };
}
