// One reconcile pass of a resource that lives outside Kubernetes (a broker's vhost, a server's
// account), the same for every kind of every backend, in the shape of crossplane-runtime's managed
// reconciler: claim (is it ours?), the gatekeeper's entry, Secrets out of reach, teardown (resolve the
// endpoint, remove, release the finalizer), the finalizer, then resolve the endpoint, the desired state,
// the memo (nothing is sent while it vouches for the state), sync, failure and backoff, and one status
// write with its Events through the gatekeeper's exit. Each kind supplies an ExternalHandler.
import { GATEKEEPER_REJECTED, Gatekeeper, type GatePass } from "../gatekeeper/gatekeeper.ts";
import { gatedKindName } from "../gatekeeper/kinds.ts";
import type { Result } from "../runtime/controller.ts";
import { desiredStateHash } from "../runtime/desired-state.ts";
import { TerminalError, TransientError } from "../runtime/errors.ts";
import { asKubeObject } from "../runtime/kube-objects.ts";
import type { KubeObject } from "../runtime/kube-rest.ts";
import { namespacesOutOfReach, outOfReachText } from "../runtime/secret-reach.ts";
import { refusalBackoffMs } from "./backoff.ts";
import type { ExternalDeps } from "./deps.ts";
import type { ExternalHandler, ExternalObject, Failure, Ownership, Synced } from "./handler.ts";
import { withStatus, type StatusScope } from "./status.ts";

export async function reconcileExternal<D extends ExternalDeps, O extends ExternalObject, S, C>(
  handler: ExternalHandler<D, O, S, C>,
  deps: D,
  namespace: string,
  name: string,
): Promise<Result> {
  if (!handler.enabled(deps)) return {};
  const { kind } = handler;
  const key = `${kind.kind}/${namespace}/${name}`;
  const raw = await deps.kube.get(kind, { namespace, name });
  if (raw === undefined) {
    deps.state.applied.forget(key);
    return {};
  }
  const object = parse(handler, raw, key);
  const mine = (object.metadata.finalizers ?? []).includes(handler.finalizer);
  const ownership = await handler.ownership(deps, object);
  if (ownership.decision === "declined" || (ownership.decision === "undecided" && !mine)) {
    return decline(handler, deps, raw, object, key, ownership);
  }
  if (object.metadata.uid) deps.state.reported.forget(object.metadata.uid);
  const teardown = object.metadata.deletionTimestamp !== undefined;
  if (teardown && !mine) return {};
  if (teardown) teardownEvent(handler, deps, object, "Deleting");
  // Only objects this controller serves pass through the gatekeeper, once per pass.
  const gatekeeper = deps.gatekeeper ?? Gatekeeper.empty(deps.logger, deps.clock);
  const gate = await gatekeeper.enter(gatedKindName(kind), raw, {
    cluster: "",
    kube: deps.kube,
    log: deps.logger,
    teardown,
  });
  return gate.wrap(async () => {
    const outside =
      teardown && !handler.teardownReadsSecrets
        ? []
        : outOfReach(handler, deps.settings.secretNamespaces, object);
    if (outside.length > 0) return unreachable(handler, deps, object, key, gate, outside, teardown);
    if (teardown) {
      return withStatus(deps, handler, object, gate, (status) =>
        finalize(handler, deps, object, key, status),
      );
    }
    const rejection = gate.rejection;
    if (rejection) {
      return withStatus(deps, handler, object, gate, (status) => {
        status.set([handler.conditions.notReady(rejection.message, GATEKEEPER_REJECTED)]);
        throw new TransientError(rejection.message, { retryAfterMs: rejection.retryAfterMs });
      });
    }
    // A mutating entry hook's output, for this pass only; it matched the kind's schema.
    const forPass = gate.object === raw ? object : parse(handler, gate.object, key);
    const claimed = await settleFinalizer(handler, deps, raw, forPass, key);
    return withStatus(deps, handler, claimed, gate, (status) => apply(handler, deps, claimed, key, status));
  });
}

const built = new WeakMap<object, unknown>();

/** One pass of a backend's `kind` through the engine, with the handler `build` makes of it (once per kind). */
export function reconcileWith<K extends object, D extends ExternalDeps, O extends ExternalObject, S, C>(
  build: (kind: K) => ExternalHandler<D, O, S, C>,
  kind: K,
  deps: D,
  namespace: string,
  name: string,
): Promise<Result> {
  let handler = built.get(kind) as ExternalHandler<D, O, S, C> | undefined;
  if (handler === undefined) {
    handler = build(kind);
    built.set(kind, handler);
  }
  return reconcileExternal(handler, deps, namespace, name);
}

/** The namespaces outside `limit` (--secret-namespaces; empty = none) whose Secrets the object needs. */
export function outOfReach<O extends ExternalObject>(
  handler: { secretNamespaces(object: O): string[] },
  limit: readonly string[],
  object: O,
): string[] {
  return namespacesOutOfReach(limit, handler.secretNamespaces(object));
}

function parse<D extends ExternalDeps, O extends ExternalObject, S, C>(
  handler: ExternalHandler<D, O, S, C>,
  raw: unknown,
  key: string,
): O {
  const parsed = handler.schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new TerminalError(
    `${key} is not a valid ${handler.kind.kind}: ${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`,
    handler.reasons.invalidSpec,
  );
}

/** Not ours: no status, no finalizer (our own is taken off), and one log line per object. */
async function decline<D extends ExternalDeps, O extends ExternalObject, S, C>(
  handler: ExternalHandler<D, O, S, C>,
  deps: D,
  raw: KubeObject,
  object: O,
  key: string,
  ownership: Ownership,
): Promise<Result> {
  const { namespace, name, uid } = object.metadata;
  const reason = ownership.decision === "served" ? "" : ownership.reason;
  if (deps.state.reported.first(uid ?? key)) {
    deps.logger.info(
      { kind: handler.kind.kind, namespace, name, reason },
      `not served by the ${handler.controller}`,
    );
  }
  // Taking off our own mark is cleanup, not a claim: left there it would block the deletion.
  await deps.kube.removeFinalizer(handler.kind, raw, handler.finalizer);
  deps.state.applied.forget(key);
  // An undecided object is decided once what decides it shows up.
  return ownership.decision === "undecided" ? { requeueAfterMs: deps.settings.verificationPeriodMs } : {};
}

/**
 * An object whose Secrets lie outside --secret-namespaces: nothing is asked of the API server there
 * (the chart's RBAC would refuse it) and no finalizer is added (one it carries stays); Ready says which
 * namespace to add. A new list restarts the process, which passes every object again.
 */
async function unreachable<D extends ExternalDeps, O extends ExternalObject, S, C>(
  handler: ExternalHandler<D, O, S, C>,
  deps: D,
  object: O,
  key: string,
  gate: GatePass,
  outside: string[],
  teardown: boolean,
): Promise<Result> {
  const { kind, endpointName: at } = handler;
  const message =
    `${outOfReachText(outside)}; ` +
    (teardown
      ? `the ${kind.kind} is deleted on the ${at} once it is added; to leave it on the ${at} instead, remove the finalizer ${handler.finalizer}`
      : handler.outOfReachNote);
  const { namespace, name, uid } = object.metadata;
  if (deps.state.reported.first(`out-of-reach/${uid ?? key}`)) {
    deps.logger.warn({ kind: kind.kind, namespace, name, outside }, "Secrets out of reach");
  }
  return withStatus(deps, handler, object, gate, (status) => {
    const { conditions } = handler;
    status.set([
      teardown ? conditions.notDeleted(message) : conditions.notReady(message, handler.reasons.outOfReach),
    ]);
    return Promise.resolve({});
  });
}

/**
 * The object with the finalizer it should have: added or taken off by a patch that carries the
 * resourceVersion (so others' finalizers survive) and answers with the object as now stored, whose
 * resourceVersion the status write of this pass carries.
 */
async function settleFinalizer<D extends ExternalDeps, O extends ExternalObject, S, C>(
  handler: ExternalHandler<D, O, S, C>,
  deps: D,
  raw: KubeObject,
  object: O,
  key: string,
): Promise<O> {
  const finalizers = raw.metadata?.finalizers ?? [];
  const wanted = handler.wantsFinalizer(object);
  if (wanted === finalizers.includes(handler.finalizer)) return object;
  const updated = await deps.kube.patchMetadata(handler.kind, raw, {
    finalizers: wanted
      ? [...finalizers, handler.finalizer]
      : finalizers.filter((f) => f !== handler.finalizer),
  });
  // The pass goes on with its own spec (a gatekeeper plugin's), on the object as now stored.
  return { ...parse(handler, updated, key), spec: object.spec };
}

/** The object's own interval, where it names one, else `ms`. */
function wait<D extends ExternalDeps, O extends ExternalObject, S, C>(
  handler: ExternalHandler<D, O, S, C>,
  object: O,
  ms: number,
): number {
  return handler.retryInterval?.(object) ?? ms;
}

/** When to try again after `failure`: a refusal backs off, anything else waits its interval. */
function retryAfter<D extends ExternalDeps, O extends ExternalObject, S, C>(
  handler: ExternalHandler<D, O, S, C>,
  deps: D,
  object: O,
  key: string,
  failure: Failure,
): number {
  if (failure.verdict === "refused") {
    return wait(handler, object, refusalBackoffMs(deps.settings, deps.state.applied.refused(key)));
  }
  deps.state.applied.forget(key);
  return wait(handler, object, failure.retryAfterMs);
}

async function finalize<D extends ExternalDeps, O extends ExternalObject, S, C>(
  handler: ExternalHandler<D, O, S, C>,
  deps: D,
  object: O,
  key: string,
  status: StatusScope,
): Promise<Result> {
  const { kind, endpointName: at, finalizer } = handler;
  const { namespace = "", name } = object.metadata;
  const log = { kind: kind.kind, namespace, name };
  const endpoint = await handler.endpoint(deps, object);
  if (endpoint.outcome === "waiting" || endpoint.outcome === "refused") {
    // The finalizer stays: the endpoint may still hold the object (a user with a working password),
    // also while it cannot be reached. The condition says how to let it go.
    const message = `${endpoint.reason}: the ${kind.kind} is deleted on the ${at} once that is resolved; to leave it on the ${at} instead, remove the finalizer ${finalizer}`;
    deps.logger.info({ ...log, reason: endpoint.reason }, `deletion waits for the ${at}`);
    status.set([handler.conditions.notDeleted(message)]);
    return { requeueAfterMs: wait(handler, object, deps.settings.waitingRetryMs) };
  }
  if (endpoint.outcome === "ready") {
    try {
      await handler.remove(deps, endpoint.client, object);
    } catch (error) {
      const failure = handler.failure(deps, error, [], true);
      if (!failure) throw error;
      const retryAfterMs = retryAfter(handler, deps, object, key, failure);
      deps.logger.warn(
        { ...log, error: failure.message, retryInMs: retryAfterMs },
        `deleting on the ${at} failed`,
      );
      // The finalizer stays until the endpoint lets the object go; the status says why meanwhile. The
      // endpoint's verdict is a Warning Event; an outage none (the condition says it).
      status.set(
        [handler.conditions.notDeleted(failure.message)],
        failure.verdict === "refused" ? {} : { kind: "transient" },
      );
      throw new TransientError(failure.message, { cause: error, retryAfterMs });
    }
  } else {
    // Only the endpoint's own absence: nothing is left that could hold the object.
    deps.logger.info(
      { ...log, reason: endpoint.reason },
      `${handler.endpointGone}: releasing the finalizer without the ${at}`,
    );
  }
  await deps.kube.removeFinalizer(kind, asKubeObject(object), finalizer);
  deps.state.applied.forget(key);
  teardownEvent(handler, deps, object, "Deleted");
  return {};
}

/**
 * Deleting on the first pass of a deleted object that holds the finalizer, Deleted when the finalizer
 * is released: each once per object and process (a pass that still finds a released object in its
 * cache says neither again; a restart in the middle says Deleting again).
 */
function teardownEvent<D extends ExternalDeps, O extends ExternalObject, S, C>(
  handler: ExternalHandler<D, O, S, C>,
  deps: D,
  object: O,
  step: "Deleting" | "Deleted",
): void {
  const { kind, finalizer } = handler;
  const { uid, namespace, name } = object.metadata;
  if (!deps.state.reported.first(`${step}/${uid ?? `${namespace}/${name}`}`)) return;
  const message =
    step === "Deleting"
      ? `the ${kind.kind} is deleted: its finalizer ${finalizer} is released once the ${handler.endpointName} has let it go`
      : `the ${kind.kind} is released: its finalizer ${finalizer} is removed`;
  deps.events?.teardown(kind, object, step, message);
}

async function apply<D extends ExternalDeps, O extends ExternalObject, S, C>(
  handler: ExternalHandler<D, O, S, C>,
  deps: D,
  object: O,
  key: string,
  status: StatusScope,
): Promise<Result> {
  const { kind, conditions } = handler;
  const { namespace = "", name, uid, generation } = object.metadata;
  const log = { kind: kind.kind, namespace, name };
  const { settings } = deps;
  const refuse = (message: string): never => {
    const condition = conditions.notReady(message);
    status.set([condition]);
    throw new TerminalError(message, condition.reason);
  };
  const waitFor = (message: string, reason?: string): Result => {
    status.set([conditions.notReady(message, reason)], { kind: "waiting" });
    return { requeueAfterMs: wait(handler, object, settings.waitingRetryMs) };
  };

  const unsupported = handler.unsupported?.(object);
  if (unsupported) refuse(unsupported);
  const endpoint = await handler.endpoint(deps, object);
  if (endpoint.outcome === "refused") refuse(endpoint.reason);
  if (endpoint.outcome !== "ready") return waitFor(endpoint.reason);
  const desired = await handler.desired(deps, object);
  if (desired.outcome === "deferred") {
    deps.logger.debug({ ...log, reason: desired.reason }, "waits for an object it needs");
    return { requeueAfterMs: desired.retryAfterMs };
  }
  if (desired.outcome === "invalid") refuse(desired.reason);
  if (desired.outcome === "waiting") return waitFor(desired.reason, desired.conditionReason);
  if (desired.outcome !== "ready") return {};

  const version = `${uid ?? ""}/${generation ?? ""}/${desired.secretVersion ?? ""}/${desired.sourceUid ?? ""}`;
  const hash = desiredStateHash({ endpoint: endpoint.key, spec: desired.spec }, deps.state.hashKey);
  const memo = deps.state.applied.get(key);
  const known = memo?.version === version && memo.hash === hash ? memo : undefined;
  const now = deps.clock.now();
  const succeeded = (detail: string | undefined) =>
    status.set(conditions.ready(detail), { success: { fields: desired.statusFields ?? {} } });

  // Applied and verified recently: nothing is sent. The status is set again, so a status write that
  // failed after the endpoint took the state is made now (an unchanged one is not written).
  if (known && now - known.verifiedAt < settings.verificationPeriodMs) {
    succeeded(known.detail);
    return { requeueAfterMs: known.verifiedAt + settings.verificationPeriodMs - now };
  }
  let synced: Synced;
  try {
    synced = await handler.sync(deps, endpoint.client, object, desired, {
      known: known !== undefined,
      readyAtGeneration: readyAtGeneration(object),
    });
  } catch (error) {
    const failure = handler.failure(deps, error, desired.secrets ?? [], false);
    if (!failure) throw error;
    return failed(handler, deps, object, key, status, failure);
  }
  const verifiedAt = synced.verifiedAt ?? now;
  deps.state.applied.set(key, { version, hash, verifiedAt, detail: synced.detail });
  succeeded(synced.detail);
  return { requeueAfterMs: verifiedAt + settings.verificationPeriodMs - now };
}

/**
 * A sync the endpoint refused or could not answer: Ready False with its message, the memo forgotten
 * (a refusal counted), and the retry; a wait for what the request needs is no error.
 */
function failed<D extends ExternalDeps, O extends ExternalObject, S, C>(
  handler: ExternalHandler<D, O, S, C>,
  deps: D,
  object: O,
  key: string,
  status: StatusScope,
  failure: Failure,
): Result {
  const { conditions } = handler;
  const { namespace, name } = object.metadata;
  const retryAfterMs = retryAfter(handler, deps, object, key, failure);
  const reason = failure.verdict === "waiting" ? failure.conditionReason : undefined;
  status.set(
    [conditions.notReady(failure.message, reason), ...(conditions.syncFailed?.(failure.message) ?? [])],
    failure.verdict === "refused" ? {} : { kind: failure.verdict === "waiting" ? "waiting" : "transient" },
  );
  const log = { kind: handler.kind.kind, namespace, name, error: failure.message, retryInMs: retryAfterMs };
  if (failure.verdict === "waiting") {
    deps.logger.info(log, `waiting for what the ${handler.endpointName} needs`);
    return { requeueAfterMs: retryAfterMs };
  }
  deps.logger.warn(
    { ...log, refusal: failure.verdict === "refused" },
    `the ${handler.endpointName} refused or failed`,
  );
  throw new TransientError(failure.message, { retryAfterMs });
}

/** The status of the object's Ready condition; undefined before any pass wrote one. */
export function readyStatus(object: object): string | undefined {
  const { status } = object as { status?: { conditions?: { type: string; status: string }[] } };
  return status?.conditions?.find((c) => c.type === "Ready")?.status;
}

/** The status says Ready for the current generation (kept beside the conditions or in Ready itself). */
function readyAtGeneration(object: ExternalObject): boolean {
  const status = object.status as
    | {
        observedGeneration?: number;
        conditions?: { type: string; status: string; observedGeneration?: number }[];
      }
    | undefined;
  const ready = status?.conditions?.find((c) => c.type === "Ready");
  const observed = status?.observedGeneration ?? ready?.observedGeneration;
  return ready?.status === "True" && observed === object.metadata.generation;
}
