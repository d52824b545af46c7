// One reconcile pass of a resource that lives outside Kubernetes (a broker's vhost, a server's
// account), the same for every kind of every backend, in the shape of crossplane-runtime's managed
// reconciler: claim (is it ours?), the gatekeeper's entry, Secrets out of reach, the teardown of a
// deleted object (teardown.ts), the finalizer, then the endpoint, the desired state, the memo and the
// sync (apply.ts), and one status write with its Events through the gatekeeper's exit (status.ts). Each
// kind supplies an ExternalKind (kind.ts).
import { GATEKEEPER_REJECTED, Gatekeeper } from "../gatekeeper/gatekeeper.ts";
import { gatedKindName } from "../gatekeeper/kinds.ts";
import type { Result } from "../runtime/loop/controller.ts";
import type { KubeObject } from "../runtime/port/kube-rest.ts";
import { TransientError } from "../runtime/base/errors.ts";
import { apply } from "./apply.ts";
import { decline, outOfReach, settleFinalizer, unreachable } from "./claim.ts";
import type { ExternalDeps } from "./deps.ts";
import type { ExternalKind, ExternalObject } from "./kind.ts";
import { parse, type Pass } from "./pass.ts";
import { withStatus } from "./status.ts";
import { announceWait, finalize } from "./teardown.ts";

export async function reconcileExternal<D extends ExternalDeps, O extends ExternalObject, S, C>(
  kind: ExternalKind<D, O, S, C>,
  deps: D,
  namespace: string,
  name: string,
): Promise<Result> {
  if (!kind.connector.enabled(deps)) return {};
  const key = `${kind.kind.kind}/${namespace}/${name}`;
  const raw = await deps.kube.get(kind.kind, { namespace, name });
  if (raw === undefined) {
    deps.state.applied.forget(key);
    return {};
  }
  const object = parse(kind, raw, key);
  const pass: Pass<D, O, S, C> = { kind, deps, object, key };
  const mine = (object.metadata.finalizers ?? []).includes(kind.finalizer);
  const ownership = await kind.ownership(deps, object);
  if (ownership.decision === "declined" || (ownership.decision === "undecided" && !mine)) {
    return decline(pass, raw, ownership);
  }
  if (object.metadata.uid) deps.state.reported.forget(object.metadata.uid);
  const teardown = object.metadata.deletionTimestamp !== undefined;
  if (teardown && !mine) return {};
  const passed = gatedPass(pass, raw, teardown);
  // A teardown done in one pass says only Deleted; one that waits says Deleting first (teardown.ts).
  return teardown ? announceWait(pass, passed) : passed;
}

/** The gatekeeper's entry, then the teardown or the apply, inside the gatekeeper's exit. */
async function gatedPass<D extends ExternalDeps, O extends ExternalObject, S, C>(
  pass: Pass<D, O, S, C>,
  raw: KubeObject,
  teardown: boolean,
): Promise<Result> {
  const { kind, deps, object, key } = pass;
  // Only objects this controller serves pass through the gatekeeper, once per pass.
  const gatekeeper = deps.gatekeeper ?? Gatekeeper.empty(deps.logger, deps.clock);
  const gate = await gatekeeper.enter(gatedKindName(kind.kind), raw, {
    cluster: "",
    kube: deps.kube,
    log: deps.logger,
    teardown,
  });
  return gate.wrap(async () => {
    const outside =
      teardown && !kind.connector.teardownReadsSecrets
        ? []
        : outOfReach(kind, deps.settings.secretNamespaces, object);
    if (outside.length > 0) return unreachable(pass, gate, outside, teardown);
    if (teardown) {
      return withStatus(deps, kind, object, gate, (status) => finalize(pass, status));
    }
    const rejection = gate.rejection;
    if (rejection) {
      return withStatus(deps, kind, object, gate, (status) => {
        status.set([kind.conditions.notReady(rejection.message, GATEKEEPER_REJECTED)]);
        throw new TransientError(rejection.message, { retryAfterMs: rejection.retryAfterMs });
      });
    }
    // A mutating entry hook's output, for this pass only; it matched the kind's schema.
    const forPass = gate.object === raw ? object : parse(kind, gate.object, key);
    const claimed = await settleFinalizer({ ...pass, object: forPass }, raw);
    return withStatus(deps, kind, claimed, gate, (status) => apply({ ...pass, object: claimed }, status));
  });
}

/** The status of the object's Ready condition; undefined before any pass wrote one. */
export function readyStatus(object: object): string | undefined {
  const { status } = object as { status?: { conditions?: { type: string; status: string }[] } };
  return status?.conditions?.find((c) => c.type === "Ready")?.status;
}
