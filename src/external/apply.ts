// The pass of a live object that is ours: the fields it cannot have, the endpoint, the desired state,
// then the memo (nothing is sent while it vouches for the state, applied by this process within the
// verification period, and not before its endpoint was found to have lost what it held) or the
// kind's sync, which reads back and writes what differs. A failure is Ready False with the endpoint's
// message, and a retry by its verdict.
import type { Result } from "../runtime/loop/controller.ts";
import { desiredStateHash } from "../runtime/base/desired-state.ts";
import { TerminalError, TransientError } from "../runtime/base/errors.ts";
import type { ExternalDeps } from "./deps.ts";
import type { ExternalObject, Failure, Synced } from "./kind.ts";
import { newsOfLoss, vouches } from "./memo.ts";
import { endpointLost } from "./lost.ts";
import { logFields, type Pass } from "./pass.ts";
import { retryAfter, wait } from "./retry.ts";
import type { StatusScope } from "./status.ts";

export async function apply<D extends ExternalDeps, O extends ExternalObject, S, C>(
  pass: Pass<D, O, S, C>,
  status: StatusScope,
): Promise<Result> {
  const { kind, deps, object, key } = pass;
  const { conditions } = kind;
  const { uid, generation } = object.metadata;
  const { settings } = deps;
  const refuse = (message: string): never => {
    const condition = conditions.notReady(message);
    status.set([condition]);
    throw new TerminalError(message, condition.reason);
  };
  const waitFor = (message: string, reason?: string): Result => {
    status.set([conditions.notReady(message, reason)], { kind: "waiting" });
    return { requeueAfterMs: wait(pass, settings.waitingRetryMs) };
  };

  const unsupported = kind.unsupported?.(object);
  if (unsupported) refuse(unsupported);
  const endpoint = await kind.endpoint(deps, object);
  if (endpoint.outcome === "refused") refuse(endpoint.reason);
  if (endpoint.outcome !== "ready") return waitFor(endpoint.reason);
  const desired = await kind.desired(deps, object);
  if (desired.outcome === "deferred") {
    deps.logger.debug({ ...logFields(pass), reason: desired.reason }, "waits for an object it needs");
    return { requeueAfterMs: desired.retryAfterMs };
  }
  if (desired.outcome === "invalid") refuse(desired.reason);
  if (desired.outcome === "waiting") return waitFor(desired.reason, desired.conditionReason);
  if (desired.outcome !== "ready") return {};

  const version = `${uid ?? ""}/${generation ?? ""}/${desired.secretVersion ?? ""}/${desired.sourceUid ?? ""}`;
  const hash = desiredStateHash({ endpoint: endpoint.key, spec: desired.spec }, deps.state.hashKey);
  const memo = deps.state.applied.get(key);
  const known = memo?.version === version && memo.hash === hash ? memo : undefined;
  // The memo's deadlines are this process's own: a step of the wall clock neither delays nor hastens them.
  const now = deps.clock.monotonic();
  const lostAt = deps.state.applied.lostAt(endpoint.key);
  const succeeded = (detail: string | undefined) =>
    status.set(conditions.ready(detail), { success: { fields: desired.statusFields ?? {} } });

  // Applied and verified recently: nothing is sent. The status is set again, so a status write that
  // failed after the endpoint took the state is made now (an unchanged one is not written).
  if (known && vouches(known, lostAt, now, settings.verificationPeriodMs)) {
    succeeded(known.detail);
    return { requeueAfterMs: known.verifiedAt + settings.verificationPeriodMs - now };
  }
  let synced: Synced;
  try {
    synced = await kind.sync(deps, endpoint.client, object, desired, {
      known: known !== undefined,
      readyAtGeneration: readyAtGeneration(object),
    });
  } catch (error) {
    const failure = kind.connector.failure(deps, error, desired.secrets ?? []);
    if (!failure) throw error;
    return failed(pass, status, failure);
  }
  const verifiedAt = synced.verifiedAt ?? now;
  deps.state.applied.set(key, { version, hash, endpoint: endpoint.key, verifiedAt, detail: synced.detail });
  if (synced.missing && known && newsOfLoss(known, lostAt)) {
    endpointLost(deps, endpoint.key, now, `${key} was missing`, key);
  }
  succeeded(synced.detail);
  return { requeueAfterMs: verifiedAt + settings.verificationPeriodMs - now };
}

/**
 * A sync the endpoint refused or could not answer: Ready False with its message, the memo forgotten
 * (a refusal counted), and the retry; a wait for what the request needs is no error.
 */
function failed<D extends ExternalDeps, O extends ExternalObject, S, C>(
  pass: Pass<D, O, S, C>,
  status: StatusScope,
  failure: Failure,
): Result {
  const { kind, deps } = pass;
  const { conditions, connector } = kind;
  const retryAfterMs = retryAfter(pass, failure);
  const reason = failure.verdict === "failed" ? undefined : failure.conditionReason;
  status.set(
    [conditions.notReady(failure.message, reason), ...(conditions.syncFailed?.(failure.message) ?? [])],
    failure.verdict === "refused" ? {} : { kind: failure.verdict === "waiting" ? "waiting" : "transient" },
  );
  const log = { ...logFields(pass), error: failure.message, retryInMs: retryAfterMs };
  if (failure.verdict === "waiting") {
    deps.logger.info(log, `waiting for what the ${connector.endpointName} needs`);
    return { requeueAfterMs: retryAfterMs };
  }
  deps.logger.warn(
    { ...log, refusal: failure.verdict === "refused" },
    `the ${connector.endpointName} refused or failed`,
  );
  throw new TransientError(failure.message, { retryAfterMs });
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
