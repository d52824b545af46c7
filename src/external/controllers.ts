// The controllers of a backend's kinds, the same for every backend: one per kind, its objects on the
// management cluster, each pass through that cluster's port bound to the pass's signal. What wakes an
// object: its own changes, a change of a labelled Secret it reads, of the object that declares its
// endpoint (a RabbitmqCluster, a ControlPlane), and what its kind adds. Its workers run in a lane per
// endpoint (lanes.ts).
import { secretKind } from "../api/index.ts";
import type { Result, Reconciler, Request } from "../runtime/loop/controller.ts";
import { TransientError } from "../runtime/base/errors.ts";
import type { Kind, KubeObject } from "../runtime/port/kube-rest.ts";
import type { Kube } from "../runtime/port/kube.ts";
import type { LogSink } from "../runtime/base/logging.ts";
import { notFinalizersOnly, specOrMetadataChanged } from "../runtime/port/predicates.ts";
import type { ControllerSpec, WatchSpec } from "../runtime/process/controller-declaration.ts";
import type { Manager } from "../runtime/process/manager.ts";
import type { ExternalDeps } from "./deps.ts";
import { reconcileExternal } from "./engine.ts";
import type { AnyExternalKind, Caches } from "./kind.ts";
import { lanedBy, type EndpointLanes } from "./lanes.ts";

export interface ControllerOptions {
  /** A lane per endpoint; without, the runtime's default workers. */
  lanes?: EndpointLanes | undefined;
  /** A kind's own number of workers (per endpoint, with lanes), by kind name. */
  workers?: Readonly<Record<string, number | undefined>>;
}

/** One controller per kind, each pass with the deps `deps` makes of the port and logger of the reconcile. */
export function externalControllers<D extends ExternalDeps, C>(
  manager: Caches & Pick<Manager, "kube" | "cached">,
  kinds: readonly AnyExternalKind<D, C>[],
  deps: (kube: Kube, log: LogSink) => D,
  options: ControllerOptions = {},
): ControllerSpec[] {
  const { lanes } = options;
  return kinds.map((kind) => {
    const own = options.workers?.[kind.kind.kind];
    const { lane } = kind.connector;
    return {
      name: controllerName(kind),
      reconcile: onManagement(manager, (kube, log, request) =>
        reconcileExternal(kind, deps(kube, log), request.namespace, request.name),
      ),
      watches: externalWatches(kind, manager),
      ...(lanes
        ? lanedBy(manager, kind.kind, lane.of, lane.words, lanes, own ?? lanes.workers)
        : own !== undefined
          ? { workers: own }
          : {}),
    };
  });
}

function controllerName<D extends ExternalDeps, C>(kind: AnyExternalKind<D, C>): string {
  return `${kind.connector.name}-${kind.kind.plural}`;
}

/** What wakes the objects of `kind`, all on the management cluster. */
export function externalWatches<D extends ExternalDeps, C>(
  kind: AnyExternalKind<D, C>,
  caches: Caches,
): WatchSpec[] {
  const { connector } = kind;
  const { endpointObject } = connector;
  const cached = () => caches.cachedList("", kind.kind);
  return [
    {
      kind: kind.kind,
      clusters: "management",
      update: connector.quietOwnFinalizer ? changedBeyondFinalizer(kind.finalizer) : specOrMetadataChanged,
    },
    // The endpoint's readiness: the objects it declares the endpoint of wake when it changes.
    {
      kind: endpointObject.kind,
      clusters: "management",
      ...(endpointObject.update ? { update: endpointObject.update } : {}),
      map: (endpoint) => managementRequests(cached().filter(endpointObject.wakes(endpoint))),
    },
    secretWatch(caches, kind.kind, connector.secretLabel, (o, secret) =>
      kind.secretsOf(o).some((s) => s.namespace === secret.namespace && s.name === secret.name),
    ),
    ...(kind.watches?.(caches) ?? []),
  ];
}

/**
 * specOrMetadataChanged, less an update that changed nothing but the finalizers and left `finalizer`
 * on. Above all that is the controller's own claim: the pass that added the finalizer went on to
 * apply the object, so a second pass for it would find nothing to do.
 */
export function changedBeyondFinalizer(
  finalizer: string,
): (previous: KubeObject, object: KubeObject) => boolean {
  return (previous, object) =>
    specOrMetadataChanged(previous, object) &&
    (notFinalizersOnly(previous, object) || !(object.metadata?.finalizers ?? []).includes(finalizer));
}

/**
 * Passes at once of objects by memo key (`Kind/namespace/name`), each by its kind's controller, in the
 * order of `kinds` (a vhost before what lives in it).
 */
export function wakeByKey<D extends ExternalDeps, C>(
  manager: Pick<Manager, "enqueue">,
  kinds: readonly AnyExternalKind<D, C>[],
): (keys: readonly string[]) => void {
  return (keys) => {
    const requests = keys.map((key) => {
      const [kind = "", namespace = "", name = ""] = key.split("/");
      return { at: kinds.findIndex((k) => k.kind.kind === kind), namespace, name };
    });
    for (const { at, namespace, name } of requests.sort((a, b) => a.at - b.at)) {
      const kind = kinds[at];
      if (kind) manager.enqueue(controllerName(kind), { cluster: "", namespace, name });
    }
  };
}

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
