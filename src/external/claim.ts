// Whether the engine may act on an object at all: whose it is (an object served elsewhere gets no
// status and loses our finalizer), whether its Secrets are within --secret-namespaces, and the
// finalizer it should carry.
import type { GatePass } from "../gatekeeper/gatekeeper.ts";
import type { Result } from "../runtime/loop/controller.ts";
import type { KubeObject } from "../runtime/port/kube-rest.ts";
import { namespacesOutOfReach, outOfReachText } from "../runtime/base/secret-reach.ts";
import type { ExternalDeps } from "./deps.ts";
import type { ExternalObject, Ownership } from "./kind.ts";
import { logFields, parse, type Pass } from "./pass.ts";
import { withStatus } from "./status.ts";

/** Not ours: no status, no finalizer (our own is taken off), and one log line per object. */
export async function decline<D extends ExternalDeps, O extends ExternalObject, S, C>(
  pass: Pass<D, O, S, C>,
  raw: KubeObject,
  ownership: Ownership,
): Promise<Result> {
  const { kind, deps, key } = pass;
  const reason = ownership.decision === "served" ? "" : ownership.reason;
  if (deps.state.reported.first(pass.object.metadata.uid ?? key)) {
    deps.logger.info({ ...logFields(pass), reason }, `not served by the ${kind.connector.controller}`);
  }
  // Taking off our own mark is cleanup, not a claim: left there it would block the deletion.
  await deps.kube.removeFinalizer(kind.kind, raw, kind.finalizer);
  deps.state.applied.forget(key);
  // An undecided object is decided once what decides it shows up.
  return ownership.decision === "undecided" ? { requeueAfterMs: deps.settings.verificationPeriodMs } : {};
}

/** The namespaces outside `limit` (--secret-namespaces; empty = none) whose Secrets the object needs. */
export function outOfReach<O extends ExternalObject>(
  kind: { secretNamespaces(object: O): string[] },
  limit: readonly string[],
  object: O,
): string[] {
  return namespacesOutOfReach(limit, kind.secretNamespaces(object));
}

/**
 * An object whose Secrets lie outside --secret-namespaces: nothing is asked of the API server there
 * (the chart's RBAC would refuse it) and no finalizer is added (one it carries stays); Ready says which
 * namespace to add. A new list restarts the process, which passes every object again.
 */
export async function unreachable<D extends ExternalDeps, O extends ExternalObject, S, C>(
  pass: Pass<D, O, S, C>,
  gate: GatePass,
  outside: string[],
  teardown: boolean,
): Promise<Result> {
  const { kind, deps, object, key } = pass;
  const { connector, conditions } = kind;
  const at = connector.endpointName;
  const message =
    `${outOfReachText(outside)}; ` +
    (teardown
      ? `the ${kind.kind.kind} is deleted on the ${at} once it is added; to leave it on the ${at} instead, remove the finalizer ${kind.finalizer}`
      : connector.outOfReachNote);
  if (deps.state.reported.first(`out-of-reach/${object.metadata.uid ?? key}`)) {
    deps.logger.warn({ ...logFields(pass), outside }, "Secrets out of reach");
  }
  return withStatus(deps, kind, object, gate, (status) => {
    status.set([
      teardown ? conditions.notDeleted(message) : conditions.notReady(message, connector.reasons.outOfReach),
    ]);
    return Promise.resolve({});
  });
}

/**
 * The object with the finalizer it should have: added or taken off by a patch that carries the
 * resourceVersion (so others' finalizers survive) and answers with the object as now stored, whose
 * resourceVersion the status write of this pass carries.
 */
export async function settleFinalizer<D extends ExternalDeps, O extends ExternalObject, S, C>(
  pass: Pass<D, O, S, C>,
  raw: KubeObject,
): Promise<O> {
  const { kind, deps, object } = pass;
  const finalizers = raw.metadata?.finalizers ?? [];
  const wanted = kind.wantsFinalizer(object);
  if (wanted === finalizers.includes(kind.finalizer)) return object;
  const updated = await deps.kube.patchMetadata(kind.kind, raw, {
    finalizers: wanted ? [...finalizers, kind.finalizer] : finalizers.filter((f) => f !== kind.finalizer),
  });
  // The pass goes on with its own spec (a gatekeeper plugin's), on the object as now stored.
  return { ...parse(kind, updated, pass.key), spec: object.spec };
}
