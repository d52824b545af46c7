// One reconcile pass of a topology object, the same for all seven kinds: ownership, deletion,
// finalizer, broker resolution, the desired state, then a declare, a verification or nothing,
// and the status. Each kind supplies a KindHandler with its mapping and broker calls.
import type { z } from "zod";
import type { KindRef, ObjectMeta } from "../../api/index.ts";
import type { Result } from "../../runtime/controller.ts";
import { TerminalError, TransientError } from "../../runtime/errors.ts";
import type { KubeObject } from "../../runtime/kube-rest.ts";
import { namespacesOutOfReach, outOfReachText } from "../../runtime/secret-reach.ts";
import { desiredStateHash } from "../../runtime/desired-state.ts";
import { deleteGuestUser, type ManagementClient, type ReadBack } from "../broker/index.ts";
import { resolveBroker, type ClusterReference } from "../../rabbitmq/resolve-broker.ts";
import { Gatekeeper, type GatePass } from "../../gatekeeper/gatekeeper.ts";
import { Reason, gatekeeperRejected, notDeleted, notReady, ready, secretsOutOfReach } from "./conditions.ts";
import type { ControllerDeps } from "./deps.ts";
import { brokerFailure, refusalBackoffMs, type BrokerFailure } from "./failures.ts";
import { finalizerName, hasFinalizer } from "./finalizer.ts";
import { asKubeObject } from "../../runtime/kube-objects.ts";
import { decideOwnership, type Ownership } from "./ownership.ts";
import { withStatus, type ConditionUpdate, type StatusScope } from "./status.ts";

export interface TopologyObject {
  metadata: ObjectMeta;
  spec: { rabbitmqClusterReference: ClusterReference };
  status?: unknown;
}

/** The desired broker state of an object, or why there is none yet (waiting) or ever (invalid). */
export type Desired<S> =
  | {
      outcome: "ready";
      spec: S;
      /** resourceVersion of the Secret the state was read from, part of the memo's version. */
      secretVersion?: string;
      /**
       * The uid of another object the state was read from (a Permission's User), part of the memo's
       * version: a User made again is a new user on the broker, which holds none of the old one's
       * permissions, so what was applied for the old one counts for nothing.
       */
      sourceUid?: string;
      /** Values that must never reach a condition or a log line (a password). */
      secrets?: readonly string[];
      /** Status fields written on success (a User's username and credentials). */
      statusFields?: Record<string, unknown>;
      /** Removes what a new declaration replaces (a User's previous username); run after it. */
      supersedes?: (client: ManagementClient) => Promise<void>;
    }
  | { outcome: "waiting" | "invalid"; reason: string }
  /** Not yet, and nothing to report: another object this one needs is on its way (no status written). */
  | { outcome: "deferred"; reason: string; retryAfterMs: number };

/** An object's fields as a cache holds them, before any schema has looked at them. */
export type RawFields = Readonly<Record<string, unknown>>;

/** `value` as fields, or undefined when it is not an object. */
export function fieldsOf(value: unknown): RawFields | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as RawFields)
    : undefined;
}

/** The `name` of a reference such as `{ name: "creds" }`, when it is a non-empty string. */
export function referencedName(value: unknown): string | undefined {
  const name = fieldsOf(value)?.["name"];
  return typeof name === "string" && name !== "" ? name : undefined;
}

export interface KindHandler<O extends TopologyObject, S> {
  kind: KindRef;
  schema: z.ZodType<O>;
  /**
   * Secrets in the object's namespace it reads, besides a connectionSecret; from its spec as the cache
   * holds it, unparsed (asked of every cached object when a labelled Secret changes).
   */
  secretsOf(spec: RawFields): string[];
  /** Whether it always reads and writes Secrets in its own namespace (a User's generated credentials). */
  ownSecrets?: boolean;
  desired(deps: ControllerDeps, object: O): Promise<Desired<S>>;
  declare(client: ManagementClient, spec: S): Promise<void>;
  readBack(client: ManagementClient, spec: S): Promise<ReadBack>;
  /** Deletes the broker object for a deleted resource (or leaves it, under deletionPolicy retain). */
  remove(deps: ControllerDeps, client: ManagementClient, object: O): Promise<void>;
  /** Conditions besides Ready, after the broker took the state and after it failed. */
  extraConditions?: { applied: ConditionUpdate[]; failed(message: string): ConditionUpdate[] };
}

export async function reconcileObject<O extends TopologyObject, S>(
  handler: KindHandler<O, S>,
  deps: ControllerDeps,
  namespace: string,
  name: string,
): Promise<Result> {
  if (!deps.ownership.enabled) return {};
  const kind = handler.kind;
  const key = `${kind.kind}/${namespace}/${name}`;
  const raw = await deps.kube.get(kind, { namespace, name });
  if (raw === undefined) {
    deps.state.applied.forget(key);
    return {};
  }
  const object = parse(handler, raw, key);
  const ownership = await decideOwnership(deps, object.spec.rabbitmqClusterReference, namespace);
  const mine = hasFinalizer(kind, object.metadata);
  if (ownership.decision === "declined" || (ownership.decision === "undecided" && !mine)) {
    return decline(handler, deps, object, ownership);
  }
  if (object.metadata.uid) deps.state.reported.forget(object.metadata.uid);
  const teardown = object.metadata.deletionTimestamp !== undefined;
  if (teardown && !mine) return {};
  // Only objects this controller serves pass through the gatekeeper, once per pass.
  const gatekeeper = deps.gatekeeper ?? Gatekeeper.empty(deps.logger, deps.clock);
  const gate = await gatekeeper.enter(kind.kind, raw, {
    cluster: "",
    kube: deps.kube,
    log: deps.logger,
    teardown,
  });
  return gate.wrap(async () => {
    const outside = outOfReach(handler, deps.settings.secretNamespaces, object);
    if (outside.length > 0) return unreachable(handler, deps, object, gate, outside, teardown);
    if (teardown)
      return withStatus(deps, kind, object, gate, (status) => finalize(handler, deps, object, key, status));
    const rejection = gate.rejection;
    if (rejection) {
      return withStatus(deps, kind, object, gate, (status) => {
        status.set([gatekeeperRejected(rejection.message)]);
        throw new TransientError(rejection.message, { retryAfterMs: rejection.retryAfterMs });
      });
    }
    // A mutating entry hook's output, for this pass only; it matched the kind's schema.
    const forPass = gate.object === raw ? object : parse(handler, gate.object, key);
    const claimed = await withFinalizer(handler, deps, raw, forPass, key);
    return withStatus(deps, kind, claimed, gate, (status) => apply(handler, deps, claimed, key, status));
  });
}

/**
 * The namespaces outside `limit` (--secret-namespaces; empty = none) whose Secrets the object needs:
 * its broker's (the RabbitmqCluster's default-user Secret, or the connection Secret) and, for a kind
 * that keeps Secrets beside it (a User's credentials), its own.
 */
export function outOfReach<O extends TopologyObject>(
  handler: Pick<KindHandler<O, unknown>, "secretsOf" | "ownSecrets">,
  limit: readonly string[],
  object: O,
): string[] {
  const own = object.metadata.namespace ?? "";
  const ref = object.spec.rabbitmqClusterReference;
  const spec = object.spec as unknown as RawFields;
  const beside = handler.ownSecrets || handler.secretsOf(spec).length > 0;
  return namespacesOutOfReach(limit, [ref.namespace || own, ...(beside ? [own] : [])]);
}

/**
 * An object whose Secrets lie outside --secret-namespaces: nothing is asked of the API server there
 * (the chart's RBAC would refuse it) and no finalizer is added; Ready says which namespace to add. A
 * new list restarts the process, which passes every object again; a change of the object does too.
 */
async function unreachable<O extends TopologyObject>(
  handler: KindHandler<O, unknown>,
  deps: ControllerDeps,
  object: O,
  gate: GatePass,
  outside: string[],
  teardown: boolean,
): Promise<Result> {
  const message =
    `${outOfReachText(outside)}; ` +
    (teardown
      ? `the ${handler.kind.kind} is deleted on the broker once it is added; to leave it on the broker instead, remove the finalizer ${finalizerName(handler.kind)}`
      : `nothing is declared on the broker until it is added`);
  const { namespace, name } = object.metadata;
  if (deps.state.reported.first(`out-of-reach/${object.metadata.uid ?? `${namespace}/${name}`}`)) {
    deps.logger.warn({ kind: handler.kind.kind, namespace, name, outside }, "Secrets out of reach");
  }
  return withStatus(deps, handler.kind, object, gate, (status) => {
    status.set([teardown ? notDeleted(message) : secretsOutOfReach(message)]);
    return Promise.resolve({});
  });
}

/**
 * The object with our finalizer. When it was missing, the patch that adds it (with the resourceVersion
 * as a precondition, so others' finalizers survive) answers with the object as now stored, whose
 * resourceVersion the status write of this pass carries.
 */
async function withFinalizer<O extends TopologyObject>(
  handler: KindHandler<O, unknown>,
  deps: ControllerDeps,
  raw: KubeObject,
  object: O,
  key: string,
): Promise<O> {
  const kind = handler.kind;
  const finalizers = raw.metadata?.finalizers ?? [];
  const finalizer = finalizerName(kind);
  if (finalizers.includes(finalizer)) return object;
  const updated = await deps.kube.patchMetadata(kind, raw, { finalizers: [...finalizers, finalizer] });
  // The pass goes on with its own spec (a gatekeeper plugin's), on the object as now stored.
  return { ...parse(handler, updated, key), spec: object.spec };
}

function parse<O extends TopologyObject>(handler: KindHandler<O, unknown>, raw: unknown, key: string): O {
  const parsed = handler.schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.join(".") ?? "";
  throw new TerminalError(
    `${key} is not a valid ${handler.kind.kind}: ${where} ${issue?.message ?? ""}`,
    Reason.InvalidSpec,
  );
}

/** Not ours: no status, no finalizer (our own is taken off), and one log line per object. */
async function decline<O extends TopologyObject>(
  handler: KindHandler<O, unknown>,
  deps: ControllerDeps,
  object: O,
  ownership: Ownership,
): Promise<Result> {
  const reason = ownership.decision === "served" ? "" : ownership.reason;
  if (
    deps.state.reported.first(object.metadata.uid ?? `${object.metadata.namespace}/${object.metadata.name}`)
  ) {
    deps.logger.info(
      { kind: handler.kind.kind, namespace: object.metadata.namespace, name: object.metadata.name, reason },
      "not served by the built-in topology controller",
    );
  }
  // Taking off our own mark is cleanup, not a claim: left there it would block the deletion.
  await deps.kube.removeFinalizer(handler.kind, asKubeObject(object), finalizerName(handler.kind));
  // An undecided object is decided once its RabbitmqCluster shows up.
  return ownership.decision === "undecided" ? { requeueAfterMs: deps.settings.verificationPeriodMs } : {};
}

async function finalize<O extends TopologyObject, S>(
  handler: KindHandler<O, S>,
  deps: ControllerDeps,
  object: O,
  key: string,
  status: StatusScope,
): Promise<Result> {
  const { namespace = "", name } = object.metadata;
  const log = { kind: handler.kind.kind, namespace, name };
  const resolution = await resolveBroker(
    object.spec.rabbitmqClusterReference,
    namespace,
    deps.lookup,
    deps.resolve,
  );
  if (resolution.outcome === "waiting" || resolution.outcome === "refused") {
    // The finalizer stays: the broker may still hold the object (a user with a working password), also
    // while its RabbitmqCluster is scaled to zero or misses its Secret or Service, where upstream lets
    // go. The condition says how to let it go.
    const message = `${resolution.reason}: the ${handler.kind.kind} is deleted on the broker once that is resolved; to leave it on the broker instead, remove the finalizer ${finalizerName(handler.kind)}`;
    deps.logger.info({ ...log, reason: resolution.reason }, "deletion waits for the broker");
    status.set([notDeleted(message)]);
    return { requeueAfterMs: deps.settings.waitingRetryMs };
  }
  if (resolution.outcome === "ready") {
    try {
      await handler.remove(deps, deps.clients.client(resolution.connection), object);
    } catch (error) {
      const failure = brokerFailure(error, deps.settings, []);
      if (!failure) throw error;
      const retryAfterMs = retryAfter(deps, key, failure);
      deps.logger.warn(
        { ...log, error: failure.message, retryInMs: retryAfterMs },
        "deleting on the broker failed",
      );
      // The finalizer stays until the broker lets the object go; the status says why meanwhile.
      status.set([notDeleted(failure.message)]);
      // The broker's verdict is a Warning Event; an outage none (the condition says it).
      if (!failure.refusal) status.classify("transient");
      throw new TransientError(failure.message, { cause: error, retryAfterMs });
    }
  } else {
    // Only the RabbitmqCluster's own absence: no broker is left that could hold the object.
    deps.logger.info(
      { ...log, reason: resolution.reason },
      "RabbitmqCluster gone: releasing the finalizer without the broker",
    );
  }
  await deps.kube.removeFinalizer(handler.kind, asKubeObject(object), finalizerName(handler.kind));
  deps.state.applied.forget(key);
  return {};
}

async function apply<O extends TopologyObject, S>(
  handler: KindHandler<O, S>,
  deps: ControllerDeps,
  object: O,
  key: string,
  status: StatusScope,
): Promise<Result> {
  const { kind } = handler;
  const { namespace = "", name, uid, generation } = object.metadata;
  const log = { kind: kind.kind, namespace, name };
  const { settings } = deps;
  const fail = (message: string, extra: ConditionUpdate[] = []) => status.set([notReady(message), ...extra]);

  const resolution = await resolveBroker(
    object.spec.rabbitmqClusterReference,
    namespace,
    deps.lookup,
    deps.resolve,
  );
  if (resolution.outcome === "refused") {
    fail(resolution.reason);
    throw new TerminalError(resolution.reason, Reason.FailedCreateOrUpdate);
  }
  if (resolution.outcome !== "ready") {
    fail(resolution.reason);
    status.classify("waiting");
    return { requeueAfterMs: settings.waitingRetryMs };
  }
  const desired = await handler.desired(deps, object);
  if (desired.outcome === "deferred") {
    deps.logger.debug({ ...log, reason: desired.reason }, "waits for an object it needs");
    return { requeueAfterMs: desired.retryAfterMs };
  }
  if (desired.outcome !== "ready") {
    fail(desired.reason);
    if (desired.outcome === "invalid") throw new TerminalError(desired.reason, Reason.FailedCreateOrUpdate);
    status.classify("waiting");
    return { requeueAfterMs: settings.waitingRetryMs };
  }

  const client = deps.clients.client(resolution.connection);
  const version = `${uid ?? ""}/${generation ?? ""}/${desired.secretVersion ?? ""}/${desired.sourceUid ?? ""}`;
  const hash = desiredStateHash({ broker: resolution.key, spec: desired.spec }, deps.state.hashKey);
  const memo = deps.state.applied.get(key);
  const known = memo?.version === version && memo.hash === hash ? memo : undefined;
  const now = deps.clock.now();
  const succeeded = () =>
    status.set([ready(), ...(handler.extraConditions?.applied ?? [])], {
      fields: desired.statusFields ?? {},
    });

  if (known && now - known.verifiedAt < settings.verificationPeriodMs) {
    succeeded();
    return { requeueAfterMs: known.verifiedAt + settings.verificationPeriodMs - now };
  }
  try {
    await deleteGuestWhenDue(deps, client, resolution.key, now);
    // A Ready object this process has no memo of (after a restart) is read back before anything is
    // declared: a broker that holds it already costs a read, not a write.
    const restarted = !known && !desired.supersedes && readyAtGeneration(object);
    const check = known || restarted ? await handler.readBack(client, desired.spec) : undefined;
    if (known && check && !check.matches) {
      deps.logger.info(
        { ...log, exists: check.exists, differences: check.differences },
        "drift: declaring again",
      );
      await handler.declare(client, desired.spec);
    } else if (!known && !check?.matches) {
      await handler.declare(client, desired.spec);
      deps.logger.info(log, "declared on the broker");
      if (desired.supersedes) {
        await desired.supersedes(client);
        deps.logger.info(log, "removed what the declaration replaces");
      }
    }
  } catch (error) {
    const failure = brokerFailure(error, settings, desired.secrets ?? []);
    if (!failure) throw error;
    fail(failure.message, handler.extraConditions?.failed(failure.message));
    const retryAfterMs = retryAfter(deps, key, failure);
    deps.logger.warn(
      { ...log, error: failure.message, refusal: failure.refusal, retryInMs: retryAfterMs },
      "broker refused or failed",
    );
    if (!failure.refusal) status.classify("transient");
    throw new TransientError(failure.message, { retryAfterMs });
  }
  deps.state.applied.set(key, { version, hash, verifiedAt: now });
  succeeded();
  return { requeueAfterMs: settings.verificationPeriodMs };
}

/** The status of the object's Ready condition; undefined before any pass wrote one. */
export function readyStatus(object: object): string | undefined {
  const { status } = object as { status?: { conditions?: { type: string; status: string }[] } };
  return status?.conditions?.find((c) => c.type === "Ready")?.status;
}

/** The object's status says Ready for its current generation: some process declared it on the broker. */
function readyAtGeneration(object: TopologyObject): boolean {
  const status = object.status as { observedGeneration?: number } | undefined;
  return status?.observedGeneration === object.metadata.generation && readyStatus(object) === "True";
}

/** When to try again after `failure`: a refusal backs off, anything else waits its fixed interval. */
function retryAfter(deps: ControllerDeps, key: string, failure: BrokerFailure): number {
  if (failure.refusal) return refusalBackoffMs(deps.settings, deps.state.applied.refused(key));
  deps.state.applied.forget(key);
  return failure.retryAfterMs;
}

/** Seed 000: a definitions import on node boot brings `guest` back; each verification removes it. */
async function deleteGuestWhenDue(
  deps: ControllerDeps,
  client: ManagementClient,
  brokerKey: string,
  now: number,
): Promise<void> {
  if (!deps.settings.deleteGuestUser) return;
  const last = deps.state.guestDeletedAt.get(brokerKey);
  if (last !== undefined && now - last < deps.settings.verificationPeriodMs) return;
  deps.state.guestDeletedAt.set(brokerKey, now);
  try {
    const outcome = await deleteGuestUser(client);
    if (outcome === "deleted") deps.logger.info({ broker: brokerKey }, "deleted the broker's guest user");
  } catch (error) {
    // Not this object's failure: the next verification tries again.
    deps.state.guestDeletedAt.delete(brokerKey);
    const message = error instanceof Error ? error.message : String(error);
    deps.logger.warn({ broker: brokerKey, error: message }, "deleting the guest user failed");
  }
}
