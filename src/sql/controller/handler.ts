// One reconcile pass of a SQL object, the same for the four kinds: ownership, deletion, Secrets out of
// reach (--secret-namespaces), the finalizer cleanupPolicy asks for, the fields that cannot be honoured,
// the desired state, then the server (or nothing, while the memo vouches for it) and the Ready
// condition. Each kind supplies a handler.
import type { z } from "zod";
import type { KindRef, ObjectMeta } from "../../api/index.ts";
import type { Result } from "../../runtime/controller.ts";
import { parseDuration } from "../../runtime/duration.ts";
import { TerminalError, TransientError } from "../../runtime/errors.ts";
import type { KubeObject } from "../../runtime/kube-rest.ts";
import { namespacesOutOfReach, outOfReachText } from "../../runtime/secret-reach.ts";
import { desiredStateHash } from "../../runtime/desired-state.ts";
import { sqlFailure, type SqlFailure } from "../server/index.ts";
import { Reason, notReady, ready, type SqlStatus } from "./conditions.ts";
import type { SqlDeps } from "./deps.ts";
import { finalizerName, hasFinalizer } from "./finalizer.ts";
import { asKubeObject } from "../../runtime/kube-objects.ts";
import { decideOwnership, type Reference } from "./ownership.ts";
import { withStatus, type StatusScope } from "./status.ts";

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

/** The desired server state of an object, or why there is none yet (waiting) or ever (invalid). */
export type Desired<S> =
  | {
      outcome: "ready";
      spec: S;
      /** resourceVersions of the Secrets the state was read from, part of the memo's version. */
      secretVersion?: string;
      /** Values that must never reach a condition or a log line (a password, its hash). */
      secrets?: readonly string[];
    }
  | { outcome: "waiting" | "invalid"; reason: string }
  /** Something in the way belongs to someone else (a Secret of that name): left alone, said so. */
  | { outcome: "notOwned"; reason: string };

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
  /** Brings the server (and for a Connection its Secret) to `spec`: reads back, writes what differs. */
  apply(deps: SqlDeps, object: O, spec: S): Promise<Applied>;
  /** Drops what the object declared, for cleanupPolicy Delete; absent for a kind without one. */
  remove?(deps: SqlDeps, object: O): Promise<void>;
}

export async function reconcileSqlObject<O extends SqlObject, S>(
  handler: SqlHandler<O, S>,
  deps: SqlDeps,
  namespace: string,
  name: string,
): Promise<Result> {
  const { kind } = handler;
  const key = `${kind.kind}/${namespace}/${name}`;
  const raw = await deps.kube.get(kind, { namespace, name });
  if (raw === undefined) {
    deps.state.applied.forget(key);
    return {};
  }
  const object = parse(handler, raw, key);
  const mine = hasFinalizer(kind, object.metadata);
  const ownership = decideOwnership(deps.refs, handler.reference(object), namespace);
  if (ownership.decision === "declined") {
    if (deps.state.reported.first(object.metadata.uid ?? key)) {
      deps.logger.info(
        { kind: kind.kind, namespace, name, reason: ownership.reason },
        "not served by the built-in SQL controller",
      );
    }
    // Taking off our own mark is cleanup, not a claim: left there it would block the deletion.
    if (mine) await deps.kube.removeFinalizer(kind, raw, finalizerName(kind));
    deps.state.applied.forget(key);
    return {};
  }
  if (object.metadata.uid) deps.state.reported.forget(object.metadata.uid);
  if (object.metadata.deletionTimestamp) {
    deps.state.applied.forget(key);
    if (!mine) return {};
    return withStatus(deps, kind, object, (status) => finalize(handler, deps, object, status));
  }
  // A deletion needs no Secret (dropping an account or a database does not read its password).
  const outside = outOfReach(handler, deps.settings.secretNamespaces, object);
  if (outside.length > 0) return unreachable(handler, deps, object, key, outside);
  const current = await settleFinalizer(handler, deps, raw, object, key);
  if (!current) return {};
  return withStatus(deps, kind, current, (status) => apply(handler, deps, current, key, status));
}

/**
 * The namespaces outside `limit` (--secret-namespaces; empty = none) whose Secrets the object needs:
 * its own, for a kind that keeps Secrets beside it (a Connection's) or an object that names one (a
 * User's password Secret). The server's administrator comes from the settings, never from a Secret.
 */
export function outOfReach<O extends SqlObject>(
  handler: Pick<SqlHandler<O, unknown>, "secretsOf" | "ownSecrets">,
  limit: readonly string[],
  object: O,
): string[] {
  const beside = handler.ownSecrets || handler.secretsOf(object).length > 0;
  return namespacesOutOfReach(limit, beside ? [object.metadata.namespace ?? ""] : []);
}

/**
 * An object whose Secrets lie outside --secret-namespaces: no Secret is asked for there (the chart's
 * Roles would refuse it), nothing is declared and no finalizer is added (one it carries stays); Ready
 * says which namespace to list. A new list restarts the process, which passes every object again.
 */
async function unreachable<O extends SqlObject>(
  handler: SqlHandler<O, unknown>,
  deps: SqlDeps,
  object: O,
  key: string,
  outside: string[],
): Promise<Result> {
  const { kind } = handler;
  const { namespace, name, uid } = object.metadata;
  deps.state.applied.forget(key);
  if (deps.state.reported.first(`out-of-reach/${uid ?? key}`)) {
    deps.logger.warn({ kind: kind.kind, namespace, name, outside }, "Secrets out of reach");
  }
  const message = `${outOfReachText(outside)}; nothing is declared on the server and no finalizer is added until it is listed`;
  return withStatus(deps, kind, object, (status) => {
    status.set(notReady(message, Reason.SecretsOutOfReach));
    return Promise.resolve({});
  });
}

function parse<O extends SqlObject>(handler: SqlHandler<O, unknown>, raw: unknown, key: string): O {
  const parsed = handler.schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new TerminalError(
    `${key} is not a valid ${handler.kind.kind}: ${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`,
    Reason.ReconcileError,
  );
}

/**
 * Only cleanupPolicy Delete holds the object with a finalizer; a policy changed back to Skip lets it
 * go. The object is read again after a change, so that the status write carries its resourceVersion.
 */
async function settleFinalizer<O extends SqlObject>(
  handler: SqlHandler<O, unknown>,
  deps: SqlDeps,
  raw: KubeObject,
  object: O,
  key: string,
): Promise<O | undefined> {
  const { kind } = handler;
  const wanted = handler.remove !== undefined && specField(object, "cleanupPolicy") === "Delete";
  const has = hasFinalizer(kind, object.metadata);
  if (wanted === has) return object;
  if (wanted) await deps.kube.ensureFinalizer(kind, raw, finalizerName(kind));
  else await deps.kube.removeFinalizer(kind, raw, finalizerName(kind));
  const { namespace = "", name = "" } = object.metadata;
  const updated = await deps.kube.get(kind, { namespace, name }, { live: true });
  return updated && parse(handler, updated, key);
}

/** spec.retryInterval, when it parses, else the controller's interval for that kind of wait. */
function retryWait(object: SqlObject, fallbackMs: number): number {
  const text = specField(object, "retryInterval");
  const own = text ? parseDuration(text) : undefined;
  return own !== undefined && own > 0 ? own : fallbackMs;
}

async function finalize<O extends SqlObject, S>(
  handler: SqlHandler<O, S>,
  deps: SqlDeps,
  object: O,
  status: StatusScope,
): Promise<Result> {
  const { kind } = handler;
  const { namespace, name } = object.metadata;
  if (handler.remove && specField(object, "cleanupPolicy") === "Delete") {
    try {
      await handler.remove(deps, object);
      deps.logger.info({ kind: kind.kind, namespace, name }, "dropped on the server (cleanupPolicy Delete)");
    } catch (error) {
      const failure = sqlFailure(error, []);
      if (!failure) throw error;
      // Already gone (an account dropped with its grants) is what the deletion asked for.
      if (failure.kind !== "missing" && failure.kind !== "notOwned") {
        const message = `dropping on the server failed: ${failure.message}; the finalizer ${finalizerName(kind)} stays until it succeeds (remove it to keep the object on the server)`;
        deps.logger.warn({ kind: kind.kind, namespace, name, error: failure.message }, "dropping failed");
        status.set(notReady(message), "transient");
        throw new TransientError(failure.message, {
          retryAfterMs: retryWait(object, deps.settings.transientRetryMs),
        });
      }
    }
  }
  await deps.kube.removeFinalizer(kind, asKubeObject(object), finalizerName(kind));
  return {};
}

async function apply<O extends SqlObject, S>(
  handler: SqlHandler<O, S>,
  deps: SqlDeps,
  object: O,
  key: string,
  status: StatusScope,
): Promise<Result> {
  const { kind } = handler;
  const { namespace = "", name, uid, generation } = object.metadata;
  const log = { kind: kind.kind, namespace, name };
  const { settings } = deps;

  const field = handler.unsupported(object);
  if (field) {
    const message = `${field} is set to something the built-in SQL controller does not honour; remove it, or let upstream's mariadb-operator serve this object`;
    status.set(notReady(message));
    throw new TerminalError(message, Reason.ReconcileError);
  }
  const desired = await handler.desired(deps, object);
  if (desired.outcome === "invalid") {
    status.set(notReady(desired.reason));
    throw new TerminalError(desired.reason, Reason.ReconcileError);
  }
  if (desired.outcome !== "ready") {
    status.set(
      notReady(desired.reason, desired.outcome === "notOwned" ? Reason.NotOwned : undefined),
      "waiting",
    );
    return { requeueAfterMs: retryWait(object, settings.waitingRetryMs) };
  }

  const version = `${uid ?? ""}/${generation ?? ""}/${desired.secretVersion ?? ""}`;
  const hash = desiredStateHash(desired.spec, deps.state.hashKey);
  const memo = deps.state.applied.get(key);
  const known = memo?.version === version && memo.hash === hash ? memo : undefined;
  const now = deps.clock.now();
  // Applied and verified recently, and the status says so: no statement, no status write. A status
  // write that failed after the server took the state finds Ready not yet True here, and writes it.
  const held = object.status?.conditions?.find((c) => c.type === "Ready");
  const recorded = held?.status === "True" && held.observedGeneration === generation;
  if (known && recorded && now - known.verifiedAt < settings.verificationPeriodMs) {
    return { requeueAfterMs: known.verifiedAt + settings.verificationPeriodMs - now };
  }
  let applied: Applied;
  try {
    applied = await handler.apply(deps, object, desired.spec);
  } catch (error) {
    const failure = sqlFailure(error, desired.secrets ?? []);
    if (!failure) throw error;
    return failed(deps, object, key, status, failure);
  }
  if (applied.changed.length > 0) {
    deps.logger.info(
      { ...log, changed: applied.changed },
      known ? "drift: repaired on the server" : "declared on the server",
    );
  }
  deps.state.applied.set(key, { version, hash, verifiedAt: now });
  status.set(ready(applied.message));
  return { requeueAfterMs: settings.verificationPeriodMs };
}

/**
 * A missing dependency (the account of a Grant, say) waits and is tried again, as seed 002's sweeps
 * do; a server out of reach is transient; a refusal names what to fix and backs off per refusal.
 */
function failed(
  deps: SqlDeps,
  object: SqlObject,
  key: string,
  status: StatusScope,
  failure: SqlFailure,
): Result {
  const { settings } = deps;
  if (failure.kind === "notOwned") {
    deps.state.applied.forget(key);
    status.set(notReady(failure.message, Reason.NotOwned), "waiting");
    deps.logger.warn({ key, reason: failure.message }, "left alone: not this object's on the server");
    return { requeueAfterMs: retryWait(object, settings.waitingRetryMs) };
  }
  if (failure.kind === "missing") {
    deps.state.applied.forget(key);
    status.set(notReady(failure.message), "waiting");
    deps.logger.info({ key, reason: failure.message }, "waiting for what the statement needs");
    return { requeueAfterMs: retryWait(object, settings.waitingRetryMs) };
  }
  let retryAfterMs: number;
  if (failure.kind === "unreachable") {
    deps.state.applied.forget(key);
    status.set(notReady(failure.message), "transient");
    retryAfterMs = retryWait(object, settings.transientRetryMs);
  } else {
    status.set(notReady(failure.message));
    const count = deps.state.applied.refused(key);
    const doubled = settings.waitingRetryMs * 2 ** Math.max(0, count - 1);
    retryAfterMs = retryWait(
      object,
      Math.min(doubled, Math.max(settings.verificationPeriodMs, settings.waitingRetryMs)),
    );
  }
  deps.logger.warn({ key, error: failure.message, retryInMs: retryAfterMs }, "the server refused or failed");
  throw new TransientError(failure.message, { retryAfterMs });
}
