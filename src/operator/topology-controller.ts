// The built-in topology controller in the manager: one controller per rabbitmq.com kind, on the
// management cluster only. Besides its own kind, a kind watches the labelled Secrets its objects read
// (imported credentials, connection Secrets) and, for Permissions, the Users they reference. Each
// reconcile reads and writes through the management cluster's port, bound to its signal, and logs
// through its own logger.
import { exchangeKind, queueKind, rabbitmqClusterKind, secretKind, userKind } from "../api/index.ts";
import type { Gatekeeper } from "../gatekeeper/gatekeeper.ts";
import type { Clock } from "../runtime/clock.ts";
import type { EventSpec } from "../runtime/events.ts";
import type { Request } from "../runtime/controller.ts";
import { TransientError } from "../runtime/errors.ts";
import type { Kind, KubeObject } from "../runtime/kube-rest.ts";
import type { ControllerSpec, Manager, WatchSpec } from "../runtime/manager.ts";
import type { CacheIndex } from "../runtime/object-index.ts";
import type { BrokerConnections } from "../rabbitmq/broker-access.ts";
import {
  bindingEndKey,
  bindingsByEnd,
  changedBeyondOurFinalizer,
  createSharedDeps,
  reconcileDeps,
  topologyControllerKinds,
  type ClusterSelection,
  type SharedDeps,
  type TopologyKind,
} from "../topology/controller/index.ts";
import { readyStatus, type TransitionEvents } from "../external/index.ts";
import { TOPOLOGY_SECRET_LABEL } from "../api/contracts.ts";
import type { OperatorConfig } from "./settings.ts";
import { slowLaneEvent, topologyLane } from "./topology-lanes.ts";

/** `all`, `none`, `names:a,ns/b` or `annotation:key[=value]`, as the topology-clusters setting reads. */
export function clusterSelection(text: string): ClusterSelection {
  if (text === "all" || text === "none") return { serve: text };
  if (text.startsWith("names:")) return { serve: "names", names: text.slice("names:".length).split(",") };
  const [annotation = "", value] = text.slice("annotation:".length).split("=", 2);
  return value === undefined ? { serve: "annotated", annotation } : { serve: "annotated", annotation, value };
}

function requestsFor(objects: KubeObject[]): Request[] {
  return objects.map((o) => ({
    cluster: "",
    namespace: o.metadata?.namespace ?? "",
    name: o.metadata?.name ?? "",
  }));
}

/** Whether a topology object's rabbitmqClusterReference names this RabbitmqCluster (by name, in its namespace or the named one). */
function referencesCluster(object: KubeObject, rmq: { name?: string; namespace?: string }): boolean {
  const ref = (
    object["spec"] as { rabbitmqClusterReference?: { name?: string; namespace?: string } } | undefined
  )?.rabbitmqClusterReference;
  return (
    !!ref?.name && ref.name === rmq.name && (ref.namespace || object.metadata?.namespace) === rmq.namespace
  );
}

interface BrokerEnd {
  vhost?: string;
  name?: string;
}

/**
 * The Bindings among `bindings` that connect the Queue or Exchange `end` (the same namespace and
 * broker vhost, its broker name as source or destination): a binding declared before its ends is
 * refused with a 404 and waits, and the end's change wakes it instead of the retry interval.
 */
export function bindingsOf(bindings: KubeObject[], end: KubeObject): KubeObject[] {
  const spec = (end["spec"] ?? {}) as BrokerEnd;
  if (!spec.name) return [];
  const vhost = spec.vhost ?? "/";
  const isQueue = end.kind === queueKind.kind;
  return bindings.filter((b) => {
    const s = (b["spec"] ?? {}) as BrokerEnd & {
      source?: string;
      destination?: string;
      destinationType?: string;
    };
    if (b.metadata?.namespace !== end.metadata?.namespace || (s.vhost ?? "/") !== vhost) return false;
    const destination = s.destination === spec.name && (s.destinationType === "queue") === isQueue;
    return destination || (!isQueue && s.source === spec.name);
  });
}

/** An update that wrote the object's first Ready condition, or changed its status. */
export function readyChanged(previous: KubeObject, object: KubeObject): boolean {
  const now = readyStatus(object);
  return now !== undefined && now !== readyStatus(previous);
}

/** `broker`: the process's clients and resolution settings, shared with the order leg (operator/broker.ts). */
export function topologyDeps(
  config: OperatorConfig,
  clock: Clock,
  broker: BrokerConnections,
  events?: TransitionEvents,
  gatekeeper?: Gatekeeper,
): SharedDeps {
  return createSharedDeps({
    ownership: {
      enabled: config["topology-controller"],
      clusters: clusterSelection(config["topology-clusters"]),
      connectionSecrets: config["topology-connection-secrets"],
    },
    resolve: broker.resolve,
    settings: {
      verificationPeriodMs: config["topology-verification-period"],
      deleteGuestUser: config["topology-delete-guest-user"],
      secretNamespaces: config["secret-namespaces"],
      waitingRetryMs: config["connection-wait-interval"],
      transientRetryMs: config["transient-requeue-interval"],
    },
    clients: broker.clients,
    clock,
    ...(events ? { events } : {}),
    ...(gatekeeper ? { gatekeeper } : {}),
  });
}

const dependsOnIndexes = new Map<TopologyKind, CacheIndex>();

/**
 * The objects of a kind by the topology objects they depend on: filed once per change of each
 * rather than parsed for every one of them on each change of what they depend on.
 */
function dependsOnIndex(entry: TopologyKind): CacheIndex {
  let index = dependsOnIndexes.get(entry);
  if (!index) {
    index = { name: "depends-on", values: (o) => entry.dependsOn(o).map((d) => `${d.kind}/${d.name}`) };
    dependsOnIndexes.set(entry, index);
  }
  return index;
}

/** A lane per broker (topology-lanes.ts): each kind's workers per lane, and so many lanes at once. */
export interface TopologyLanes {
  /** Workers per lane of each kind but the Vhosts (max-concurrent-reconciles). */
  workers: number;
  brokers: number;
  /** A broker that has held a pass this long while others wait behind it is slow. */
  slowAfterMs: number;
  /** Records an Event on a cached object (not awaited: the recorder never throws). */
  record: (kind: Kind, object: KubeObject, event: EventSpec) => void;
}

/**
 * `vhostWorkers`: the Vhost kind's own number of workers (the others have the runtime's default);
 * with `lanes`, that many per broker.
 */
export function topologyControllers(
  manager: Manager,
  deps: SharedDeps,
  vhostWorkers?: number,
  lanes?: TopologyLanes,
): ControllerSpec[] {
  return topologyControllerKinds.map((entry) => {
    const kind = entry.kind;
    const ownWorkers = entry.kind.kind === "Vhost" ? vhostWorkers : undefined;
    const watches: WatchSpec[] = [
      { kind, clusters: "management", update: changedBeyondOurFinalizer(kind) },
      // The broker's readiness: the objects that reference a RabbitmqCluster wake when it changes.
      {
        kind: rabbitmqClusterKind,
        clusters: "management",
        map: (rmq) =>
          requestsFor(manager.cachedList("", kind).filter((o) => referencesCluster(o, rmq.metadata ?? {}))),
      },
      {
        kind: secretKind,
        clusters: "management",
        labelSelector: `${TOPOLOGY_SECRET_LABEL}=true`,
        map: (secret) =>
          requestsFor(
            manager
              .cachedList("", kind)
              .filter((o) =>
                entry
                  .secretsOf(o)
                  .some(
                    (s) => s.namespace === secret.metadata?.namespace && s.name === secret.metadata?.name,
                  ),
              ),
          ),
      },
    ];
    if (entry.kind.kind === "Permission") {
      const dependsOn = dependsOnIndex(entry);
      watches.push({
        kind: { ...userKind, namespaced: true },
        clusters: "management",
        map: (user) =>
          requestsFor(
            manager.cachedByIndex(
              "",
              kind,
              dependsOn,
              user.metadata?.namespace ?? "",
              `User/${user.metadata?.name ?? ""}`,
            ),
          ),
      });
    }
    if (entry.kind.kind === "Binding") {
      // A waiting Binding goes on once an end has been reconciled: its other changes wake none.
      for (const end of [exchangeKind, queueKind]) {
        const type = end === queueKind ? "queue" : "exchange";
        watches.push({
          kind: end,
          clusters: "management",
          map: (object) => {
            const key = bindingEndKey(object, type);
            if (readyStatus(object) === undefined || key === undefined) return [];
            const namespace = object.metadata?.namespace ?? "";
            return requestsFor(
              bindingsOf(manager.cachedByIndex("", kind, bindingsByEnd, namespace, key), object),
            );
          },
          update: readyChanged,
        });
      }
    }
    return {
      name: `topology-${entry.kind.plural}`,
      reconcile: async (request, context) => {
        const kube = manager.kube("", context.signal);
        if (!kube) throw new TransientError("the management cluster is not engaged yet");
        return entry.reconcile(reconcileDeps(deps, kube, context.log), request.namespace, request.name);
      },
      watches,
      ...(lanes
        ? laned(manager, kind, lanes, ownWorkers ?? lanes.workers)
        : ownWorkers !== undefined
          ? { workers: ownWorkers }
          : {}),
    };
  });
}

/** A kind's workers and lanes: `budget` per broker, for `lanes.brokers` brokers at once. */
function laned(
  manager: Manager,
  kind: Kind,
  lanes: TopologyLanes,
  budget: number,
): Pick<ControllerSpec, "workers" | "lanes"> {
  const cached = (r: Request) => manager.cached(r.cluster, kind, r.namespace, r.name);
  return {
    workers: budget * lanes.brokers,
    lanes: {
      of: (r) => topologyLane(cached(r)),
      budget,
      slowAfterMs: lanes.slowAfterMs,
      slow: (r, lane) => {
        const object = cached(r);
        if (object) lanes.record(kind, object, slowLaneEvent(kind.kind, lane));
      },
    },
  };
}
