// The manager's side of an engine kind's controller, the same for every backend: its objects live on
// the management cluster, each pass reads and writes through that cluster's port bound to the pass's
// signal, and a labelled Secret wakes the objects that read it.
import { secretKind } from "../api/index.ts";
import type { Result, Reconciler, Request } from "../runtime/loop/controller.ts";
import { TransientError } from "../runtime/base/errors.ts";
import type { Kind, KubeObject } from "../runtime/port/kube-rest.ts";
import type { Kube } from "../runtime/port/kube.ts";
import type { LogSink } from "../runtime/base/logging.ts";
import type { Manager, WatchSpec } from "../runtime/process/manager.ts";

/** The requests of cached objects of the management cluster. */
export function managementRequests(objects: KubeObject[]): Request[] {
  return objects.map((o) => ({
    cluster: "",
    namespace: o.metadata?.namespace ?? "",
    name: o.metadata?.name ?? "",
  }));
}

/** A reconciler whose pass gets the management cluster's port, bound to its signal, and its logger. */
export function onManagement(
  manager: Pick<Manager, "kube">,
  pass: (kube: Kube, log: LogSink, request: Request) => Promise<Result>,
): Reconciler {
  return async (request, context) => {
    const kube = manager.kube("", context.signal);
    if (!kube) throw new TransientError("the management cluster is not engaged yet");
    return pass(kube, context.log, request);
  };
}

/** The Secrets labelled `labelSelector`, each waking the cached objects of `kind` that `reads` it. */
export function secretWatch(
  manager: Pick<Manager, "cachedList">,
  kind: Kind,
  labelSelector: string,
  reads: (object: KubeObject, secret: { namespace: string; name: string }) => boolean,
): WatchSpec {
  return {
    kind: secretKind,
    clusters: "management",
    labelSelector,
    map: (secret) => {
      const ref = { namespace: secret.metadata?.namespace ?? "", name: secret.metadata?.name ?? "" };
      return managementRequests(manager.cachedList("", kind).filter((o) => reads(o, ref)));
    },
  };
}
