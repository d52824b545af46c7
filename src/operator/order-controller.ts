// An order controller in the manager: one kind's orders on every engaged cluster, fed by the orders
// themselves, their children and password Secrets on the management cluster, the delivered Secrets
// beside the orders, the ControlPlanes they reference, and the backends those ControlPlanes name (the
// kind's backend watches: for RabbitMQVhost the RabbitmqClusters and their default-user Secrets). Each pass gets the port of its
// cluster and of the management cluster, bound to the reconcile's signal, and the reconcile's logger.
import type { Logger } from "pino";
import { controlPlaneKind, secretKind, type KindRef } from "../api/index.ts";
import type { CredentialStore } from "../backup/store.ts";
import type { Gatekeeper } from "../gatekeeper/gatekeeper.ts";
import type { EventSink } from "../orders/core/deps.ts";
import type { Backend, BackendWatch, OrderKind } from "../orders/core/kind.ts";
import { labelKeys } from "../orders/core/naming.ts";
import { OrphanSightings } from "../orders/core/orphans.ts";
import { reconcileOrder } from "../orders/core/reconcile.ts";
import { SuccessorBackoff } from "../orders/core/requeue.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Request } from "../runtime/controller.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Kind, KubeObject } from "../runtime/kube-rest.ts";
import type { ControllerSpec, Manager } from "../runtime/manager.ts";
import { OwnWrites } from "../runtime/own-writes.ts";
import { notFinalizersOnly, specOrMetadataChanged } from "../runtime/predicates.ts";
import { sweepHoldReport, type DomainMetrics } from "./domain-metrics.ts";
import { TeardownEvents } from "./teardown-events.ts";

export interface OrderControllerOptions {
  manager: Manager;
  store: CredentialStore;
  metrics: DomainMetrics;
  clock: Clock;
  log: Logger;
  events: EventRecorder;
  brokerCheckTimeoutMs: number;
  /** How long past its grace period a superseded user may stay while it is used. */
  sweepHoldMs: number;
  /** How long the children of an order that no longer exists wait before they are removed. */
  orphanDelayMs: number;
  /** The runtime's transient requeue interval: the cap of a refused successor's backoff. */
  transientCapMs: number;
  gatekeeper: Gatekeeper;
  /** Workers of the controller. */
  workers: number;
  /** --secret-namespaces; empty = every namespace. */
  secretNamespaces: readonly string[];
}

/** A child (or delivered Secret) names its order by labels; a delivered Secret has no cluster label. */
export function orderOfLabelledBy(labels: { name: string; namespace: string; cluster: string }) {
  return (object: KubeObject, cluster: string): Request[] => {
    const have = object.metadata?.labels ?? {};
    const name = have[labels.name];
    const namespace = have[labels.namespace];
    if (!name || !namespace) return [];
    const orderCluster = labels.cluster in have ? (have[labels.cluster] ?? "") : cluster;
    return [{ cluster: orderCluster, namespace, name }];
  };
}

/**
 * The orders, on every cluster, whose controlPlaneRef names this ControlPlane: a change of its
 * assignments or of its published endpoint reaches orders on target clusters at once too.
 */
export function ordersOfControlPlane(
  ordersByCluster: Iterable<[cluster: string, orders: KubeObject[]]>,
  controlPlane: KubeObject,
): Request[] {
  const cpName = controlPlane.metadata?.name;
  const cpNamespace = controlPlane.metadata?.namespace;
  return [...ordersByCluster].flatMap(([cluster, orders]) =>
    orders
      .filter((order) => {
        const ref = (order["spec"] as { controlPlaneRef?: { name?: string; namespace?: string } } | undefined)
          ?.controlPlaneRef;
        return ref?.name === cpName && (ref?.namespace || order.metadata?.namespace) === cpNamespace;
      })
      .map((order) => ({
        cluster,
        namespace: order.metadata?.namespace ?? "",
        name: order.metadata?.name ?? "",
      })),
  );
}

/** The per-process backoff of refused successors, each refusal counted as a refused rotation. */
function countedBackoff(metrics: DomainMetrics, kind: string): SuccessorBackoff {
  return new (class extends SuccessorBackoff {
    override refused(key: string, capMs: number): number {
      metrics.rotations.inc({ kind, result: "refused" });
      return super.refused(key, capMs);
    }
  })();
}

function eventSink(
  manager: Manager,
  events: EventRecorder,
  kind: KindRef,
  metrics: DomainMetrics,
): EventSink {
  return {
    async emit(target, event) {
      if (event.reason === "Rotated") metrics.rotations.inc({ kind: kind.kind, result: "completed" });
      // The target-cluster chart grants no events (its Role is the orders and Secrets only), so orders
      // there report through their conditions alone.
      if (target.cluster !== "") return;
      const rest = manager.cluster(target.cluster)?.rest;
      if (!rest) return;
      // Not awaited: the recorder logs a failure and never throws, and the pass need not wait for an
      // Event's write (a transition pass records up to three) before its worker takes the next order.
      void events.emit(
        rest,
        kind,
        { metadata: { name: target.name, namespace: target.namespace, uid: target.uid } },
        { type: event.type, reason: event.reason, action: "Reconcile", note: event.message },
      );
    },
  };
}

/** How soon an order whose cache is behind its own status write is looked at again. */
const CATCH_UP_MS = 100;

export function orderController<B extends Backend>(
  kind: OrderKind<B>,
  options: OrderControllerOptions,
): ControllerSpec {
  const { manager, store, clock, events, metrics } = options;
  const sink = eventSink(manager, events, kind.kind, metrics);
  const sweepHolds = sweepHoldReport(metrics, kind.kind.kind);
  const orphans = { delayMs: options.orphanDelayMs, sightings: new OrphanSightings() };
  const backoff = countedBackoff(metrics, kind.kind.kind);
  const teardowns = new TeardownEvents(sink);
  const labels = labelKeys(kind.naming);
  const ofLabelled = orderOfLabelledBy(labels);
  // The children and Secrets a pass wrote: the watch event of that write brings no pass of its own.
  const own = new OwnWrites(clock);
  const not = (echo: boolean | Promise<boolean>) =>
    typeof echo === "boolean" ? !echo : echo.then((e) => !e);
  const notOwn = (k: Kind) => ({
    add: (object: KubeObject, cluster: string) => not(own.isEcho(cluster, k, object)),
    update: (previous: KubeObject, object: KubeObject, cluster: string) =>
      not(own.isEcho(cluster, k, object, previous)),
    delete: (object: KubeObject, cluster: string) => not(own.isQuietRemoval(cluster, k, object)),
  });
  const allOrders = () =>
    manager
      .engagedClusters()
      .map((cluster) => [cluster, manager.cachedList(cluster, kind.kind)] as [string, KubeObject[]]);
  const ordersOfBackend = (watch: BackendWatch) => (object: KubeObject) =>
    watch
      .controlPlanesOf(object, manager.cachedList("", controlPlaneKind))
      .flatMap((cp) => ordersOfControlPlane(allOrders(), cp));

  return {
    name: kind.controller,
    workers: options.workers,
    async reconcile(request, context) {
      const cachedHome = manager.kube(request.cluster, context.signal);
      const cachedManagement = manager.kube("", context.signal);
      if (!cachedHome || !cachedManagement) return; // the cluster is no longer engaged; its informers are gone too
      const cached = await cachedHome.get(kind.kind, request);
      // The cache has not seen this order's last status write yet: a pass now would redo the last one's
      // work on an outdated status and fail at its write. The write's watch event is moments away.
      if (cached && own.isBehind(request.cluster, kind.kind, cached)) return { requeueAfterMs: CATCH_UP_MS };
      const home = own.recording(cachedHome, request.cluster);
      const management = own.recording(cachedManagement, "");
      const deleting = await teardowns.before(home, kind, request);
      const result = await reconcileOrder(
        kind,
        {
          management,
          home,
          store,
          clock,
          log: context.log,
          events: sink,
          settings: {
            brokerCheckTimeoutMs: options.brokerCheckTimeoutMs,
            transientCapMs: options.transientCapMs,
            sweepHoldMs: options.sweepHoldMs,
            secretNamespaces: options.secretNamespaces,
          },
          sweepHolds,
          orphans,
          backoff,
          gatekeeper: options.gatekeeper,
        },
        request.cluster,
        request.namespace,
        request.name,
      );
      if (deleting && result.requeueAfterMs === undefined) await teardowns.done(deleting);
      return result;
    },
    watches: [
      // The order's own status writes bring no pass: only its spec and metadata do.
      { kind: kind.kind, update: specOrMetadataChanged },
      // The children; a topology controller adding or removing its finalizer brings no pass.
      ...[kind.container.kind, ...kind.teardownKinds].map((k) => ({
        kind: k,
        clusters: "management" as const,
        labelSelector: labels.name,
        map: ofLabelled,
        add: notOwn(k).add,
        update: (previous: KubeObject, object: KubeObject, cluster: string) =>
          notFinalizersOnly(previous, object) ? notOwn(k).update(previous, object, cluster) : false,
        delete: notOwn(k).delete,
      })),
      // Password Secrets on the management cluster; delivered Secrets beside the orders.
      { kind: secretKind, labelSelector: labels.name, map: ofLabelled, ...notOwn(secretKind) },
      {
        kind: controlPlaneKind,
        clusters: "management",
        map: (controlPlane) => ordersOfControlPlane(allOrders(), controlPlane),
      },
      // The backend: e.g. the managed bus's readiness and its default-user Secret, from the caches.
      ...kind.backendWatches.map((watch) => ({
        kind: watch.kind,
        clusters: "management" as const,
        labelSelector: watch.labelSelector,
        map: ordersOfBackend(watch),
      })),
    ],
  };
}
