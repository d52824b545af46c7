// The teardown of a deleted object that holds the finalizer: the endpoint is resolved and takes away
// what the object declared (or the object's policy keeps it), then the finalizer is released. Until the
// endpoint lets the object go the finalizer stays and Ready says why and how to let it go by hand. A
// Normal Event says Deleted on the release; one that says Deleting comes first only when the teardown
// has to wait (a user swept in one pass costs one Event, not two).
import type { Result } from "../runtime/loop/controller.ts";
import { TransientError } from "../runtime/base/errors.ts";
import { asKubeObject } from "../runtime/port/kube-objects.ts";
import type { ExternalDeps } from "./deps.ts";
import type { ExternalObject } from "./kind.ts";
import { logFields, type Pass } from "./pass.ts";
import { retryAfter, wait } from "./retry.ts";
import type { StatusScope } from "./status.ts";

export async function finalize<D extends ExternalDeps, O extends ExternalObject, S, C>(
  pass: Pass<D, O, S, C>,
  status: StatusScope,
): Promise<Result> {
  const { kind, deps, object } = pass;
  const { connector, finalizer } = kind;
  const at = connector.endpointName;
  const log = logFields(pass);
  const endpoint = await kind.endpoint(deps, object);
  if (endpoint.outcome === "waiting" || endpoint.outcome === "refused") {
    // The finalizer stays: the endpoint may still hold the object (a user with a working password),
    // also while it cannot be reached. The condition says how to let it go.
    const message = `${endpoint.reason}: the ${kind.kind.kind} is deleted on the ${at} once that is resolved; to leave it on the ${at} instead, remove the finalizer ${finalizer}`;
    deps.logger.info({ ...log, reason: endpoint.reason }, `deletion waits for the ${at}`);
    status.set([kind.conditions.notDeleted(message)]);
    return { requeueAfterMs: wait(pass, deps.settings.waitingRetryMs) };
  }
  if (endpoint.outcome === "ready") {
    try {
      await kind.remove(deps, endpoint.client, object);
    } catch (error) {
      const failure = connector.failure(deps, error, [], { finalizer });
      if (!failure) throw error;
      const retryAfterMs = retryAfter(pass, failure);
      deps.logger.warn(
        { ...log, error: failure.message, retryInMs: retryAfterMs },
        `deleting on the ${at} failed`,
      );
      // The endpoint's verdict is a Warning Event; an outage none (the condition says it).
      status.set(
        [kind.conditions.notDeleted(failure.message)],
        failure.verdict === "refused" ? {} : { kind: "transient" },
      );
      throw new TransientError(failure.message, { cause: error, retryAfterMs });
    }
  } else {
    // Nothing there holds the object: the endpoint is gone, or the object never reached it.
    deps.logger.info({ ...log, reason: endpoint.reason }, `releasing the finalizer without the ${at}`);
  }
  await deps.kube.removeFinalizer(kind.kind, asKubeObject(object), finalizer);
  deps.state.applied.forget(pass.key);
  released.add(pass);
  teardownEvent(pass, "Deleted");
  return {};
}

/** The passes that released their object's finalizer. */
const released = new WeakSet<object>();

/**
 * The outcome of a teardown pass, after which Deleting is recorded unless the pass released the
 * finalizer: a teardown that waits (for its endpoint, a refusal, a Secret out of reach, the gatekeeper)
 * says so at its first pass.
 */
export async function announceWait<D extends ExternalDeps, O extends ExternalObject, S, C>(
  pass: Pass<D, O, S, C>,
  outcome: Promise<Result>,
): Promise<Result> {
  try {
    return await outcome;
  } finally {
    if (!released.has(pass)) teardownEvent(pass, "Deleting");
  }
}

/**
 * Deleting on the first teardown pass that does not release the finalizer, Deleted when it is
 * released: each once per object and process (a pass that still finds a released object in its cache
 * says neither again; a restart in the middle says Deleting again).
 */
function teardownEvent<D extends ExternalDeps, O extends ExternalObject, S, C>(
  pass: Pass<D, O, S, C>,
  step: "Deleting" | "Deleted",
): void {
  const { kind, deps, object } = pass;
  const { finalizer } = kind;
  if (!deps.state.reported.first(`${step}/${object.metadata.uid ?? pass.key}`)) return;
  const message =
    step === "Deleting"
      ? `the ${kind.kind.kind} is deleted: its finalizer ${finalizer} is released once the ${kind.connector.endpointName} has let it go`
      : `the ${kind.kind.kind} is released: its finalizer ${finalizer} is removed`;
  deps.events?.teardown(kind.kind, object, step, message);
}
