// What wakes a topology object, all on the management cluster: its own changes beyond this
// controller's finalizer, the RabbitmqCluster it references, the labelled Secrets it reads (imported
// credentials, connection Secrets), for a Permission the User it names, and for a waiting Binding the
// first reconcile of an end.
import { exchangeKind, queueKind, rabbitmqClusterKind, userKind } from "../../api/index.ts";
import { TOPOLOGY_SECRET_LABEL } from "../../api/contracts.ts";
import { managementRequests, readyStatus, secretWatch } from "../../external/index.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import type { Manager } from "../../runtime/process/manager.ts";
import type { WatchSpec } from "../../runtime/process/controller-declaration.ts";
import type { CacheIndex } from "../../runtime/port/object-index.ts";
import { bindingEndKey, bindingsByEnd } from "./binding-ends.ts";
import { changedBeyondOurFinalizer } from "./finalizer.ts";
import type { TopologyKind } from "./kinds.ts";

/** The caches a topology kind's watches read. */
export type TopologyCaches = Pick<Manager, "cachedList" | "cachedByIndex">;

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

export function topologyWatches(entry: TopologyKind, caches: TopologyCaches): WatchSpec[] {
  const kind = entry.kind;
  const watches: WatchSpec[] = [
    { kind, clusters: "management", update: changedBeyondOurFinalizer(kind) },
    // The broker's readiness: the objects that reference a RabbitmqCluster wake when it changes.
    {
      kind: rabbitmqClusterKind,
      clusters: "management",
      map: (rmq) =>
        managementRequests(
          caches.cachedList("", kind).filter((o) => referencesCluster(o, rmq.metadata ?? {})),
        ),
    },
    secretWatch(caches, kind, `${TOPOLOGY_SECRET_LABEL}=true`, (o, secret) =>
      entry.secretsOf(o).some((s) => s.namespace === secret.namespace && s.name === secret.name),
    ),
  ];
  if (kind.kind === "Permission") {
    const dependsOn = dependsOnIndex(entry);
    watches.push({
      kind: { ...userKind, namespaced: true },
      clusters: "management",
      map: (user) =>
        managementRequests(
          caches.cachedByIndex(
            "",
            kind,
            dependsOn,
            user.metadata?.namespace ?? "",
            `User/${user.metadata?.name ?? ""}`,
          ),
        ),
    });
  }
  if (kind.kind === "Binding") {
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
          return managementRequests(
            bindingsOf(caches.cachedByIndex("", kind, bindingsByEnd, namespace, key), object),
          );
        },
        update: readyChanged,
      });
    }
  }
  return watches;
}
