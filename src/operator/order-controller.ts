// The RabbitMQVhost controller: one order reconciler per engaged cluster, fed by the orders on every
// cluster, their children and password Secrets on the management cluster, the delivered Secrets beside
// the orders, and the ControlPlanes they reference.
import type { Logger } from "pino";
import { controlPlaneKind, rabbitMQVhostKind, userKind, vhostKind, permissionKind } from "../api/index.ts";
import type { CredentialStore } from "../backup/store.ts";
import { LABEL_ORDER_CLUSTER, LABEL_ORDER_NAME, LABEL_ORDER_NAMESPACE } from "../orders/naming.ts";
import { ReconcileError, type EventSink, type OrderDeps } from "../orders/reconciler/deps.ts";
import { reconcileOrder } from "../orders/reconciler/reconcile.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Request } from "../runtime/controller.ts";
import { TerminalError, TransientError } from "../runtime/errors.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Kind, KubeObject, KubeRest } from "../runtime/kube-rest.ts";
import type { ControllerSpec, Manager } from "../runtime/manager.ts";

const namespaced = (k: { group: string; version: string; plural: string; kind: string }): Kind => ({
  ...k,
  namespaced: true,
});
export const orderKind = namespaced(rabbitMQVhostKind);
const secretKind: Kind = { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true };

export interface OrderControllerOptions {
  manager: Manager;
  store: CredentialStore;
  clock: Clock;
  log: Logger;
  events: EventRecorder;
  brokerCheckTimeoutMs: number;
}

/** A child (or delivered Secret) names its order by labels; a delivered Secret has no cluster label. */
export function orderOfLabelled(object: KubeObject, cluster: string): Request[] {
  const labels = object.metadata?.labels ?? {};
  const name = labels[LABEL_ORDER_NAME];
  const namespace = labels[LABEL_ORDER_NAMESPACE];
  if (!name || !namespace) return [];
  const orderCluster = LABEL_ORDER_CLUSTER in labels ? (labels[LABEL_ORDER_CLUSTER] ?? "") : cluster;
  return [{ cluster: orderCluster, namespace, name }];
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
        const ref = (order.spec as { controlPlaneRef?: { name?: string; namespace?: string } } | undefined)
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

function eventSink(manager: Manager, events: EventRecorder): EventSink {
  return {
    async emit(target, event) {
      // The target-cluster chart grants no events (its Role is the orders and Secrets only), so orders
      // there report through their conditions alone.
      if (target.cluster !== "") return;
      const rest = manager.cluster(target.cluster)?.rest;
      if (!rest) return;
      await events.emit(
        rest,
        orderKind,
        { metadata: { name: target.name, namespace: target.namespace, uid: target.uid } },
        { type: event.type, reason: event.reason, action: "Reconcile", note: event.message },
      );
    },
  };
}

export function orderController(options: OrderControllerOptions): ControllerSpec {
  const { manager, store, clock, log, events } = options;
  // One deps per cluster, rebuilt when the cluster is re-engaged with a new client.
  const depsByCluster = new Map<string, { rest: KubeRest; deps: OrderDeps }>();
  const sink = eventSink(manager, events);
  const depsFor = (clusterName: string): OrderDeps | undefined => {
    const cluster = manager.cluster(clusterName);
    const management = manager.cluster("");
    if (!cluster || !management) return undefined;
    const known = depsByCluster.get(clusterName);
    if (known?.rest === cluster.rest) return known.deps;
    const deps: OrderDeps = {
      management: management.rest.config,
      orderCluster: { name: clusterName, config: cluster.rest.config },
      store,
      now: () => new Date(clock.now()),
      log,
      events: sink,
      settings: { brokerCheckTimeoutMs: options.brokerCheckTimeoutMs },
    };
    depsByCluster.set(clusterName, { rest: cluster.rest, deps });
    return deps;
  };

  return {
    name: "rabbitmqvhost",
    async reconcile(request, context) {
      const deps = depsFor(request.cluster);
      if (!deps) return; // the cluster is no longer engaged; its informers are gone too
      try {
        return await reconcileOrder(
          { ...deps, log: context.log },
          request.cluster,
          request.namespace,
          request.name,
        );
      } catch (error) {
        if (error instanceof ReconcileError) {
          if (error.kind === "terminal")
            throw new TerminalError(error.message, "ReconcileFailed", { cause: error });
          throw new TransientError(error.message, { cause: error });
        }
        throw error;
      }
    },
    watches: [
      { kind: orderKind },
      ...[vhostKind, userKind, permissionKind].map((k) => ({
        kind: namespaced(k),
        clusters: "management" as const,
        labelSelector: LABEL_ORDER_NAME,
        map: orderOfLabelled,
      })),
      // Password Secrets on the management cluster; delivered Secrets beside the orders.
      { kind: secretKind, labelSelector: LABEL_ORDER_NAME, map: orderOfLabelled },
      {
        kind: namespaced(controlPlaneKind),
        clusters: "management",
        map: (controlPlane) =>
          ordersOfControlPlane(
            manager.engagedClusters().map((cluster) => [cluster, manager.cachedList(cluster, orderKind)]),
            controlPlane,
          ),
      },
    ],
  };
}
