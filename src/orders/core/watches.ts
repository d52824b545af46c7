// What wakes an order: the order itself, its children and password Secrets on the management cluster,
// the delivered Secrets beside it, the ControlPlane it references, and the backend that ControlPlane
// names (the kind's backend watches: for RabbitMQVhost the RabbitmqClusters and their default-user
// Secrets). The watch event of a write the order's own pass made brings no pass of its own.
import { controlPlaneKind, secretKind } from "../../api/index.ts";
import type { Request } from "../../runtime/loop/controller.ts";
import type { Kind, KubeObject } from "../../runtime/port/kube-rest.ts";
import type { Manager } from "../../runtime/process/manager.ts";
import type { WatchSpec } from "../../runtime/process/controller-declaration.ts";
import type { OwnWrites } from "../../runtime/port/own-writes.ts";
import { notFinalizersOnly, specOrMetadataChanged } from "../../runtime/port/predicates.ts";
import type { Backend, BackendWatch, OrderKind } from "./kind.ts";
import { labelKeys } from "./naming.ts";

/** The caches an order's watches read: the orders of every engaged cluster, the ControlPlanes. */
export type OrderCaches = Pick<Manager, "engagedClusters" | "cachedList">;

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

/** The watches of `kind`'s controller; `own` holds the writes its passes made (their echoes are dropped). */
export function orderWatches<B extends Backend>(
  kind: OrderKind<B>,
  caches: OrderCaches,
  own: OwnWrites,
): WatchSpec[] {
  const labels = labelKeys(kind.naming);
  const ofLabelled = orderOfLabelledBy(labels);
  const not = (echo: boolean | Promise<boolean>) =>
    typeof echo === "boolean" ? !echo : echo.then((e) => !e);
  const notOwn = (k: Kind) => ({
    add: (object: KubeObject, cluster: string) => not(own.isEcho(cluster, k, object)),
    update: (previous: KubeObject, object: KubeObject, cluster: string) =>
      not(own.isEcho(cluster, k, object, previous)),
    delete: (object: KubeObject, cluster: string) => not(own.isQuietRemoval(cluster, k, object)),
  });
  const allOrders = () =>
    caches
      .engagedClusters()
      .map((cluster) => [cluster, caches.cachedList(cluster, kind.gvk)] as [string, KubeObject[]]);
  const ordersOfBackend = (watch: BackendWatch) => (object: KubeObject) =>
    watch
      .controlPlanesOf(object, caches.cachedList("", controlPlaneKind))
      .flatMap((cp) => ordersOfControlPlane(allOrders(), cp));

  return [
    // The order's own status writes bring no pass: only its spec and metadata do.
    { kind: kind.gvk, update: specOrMetadataChanged },
    // The children; a topology controller adding or removing its finalizer brings no pass.
    ...[kind.container.gvk, ...kind.teardownKinds].map((k) => ({
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
    // Orders read the ControlPlane's spec only: its status writes bring no pass.
    {
      kind: controlPlaneKind,
      clusters: "management",
      update: specOrMetadataChanged,
      map: (controlPlane) => ordersOfControlPlane(allOrders(), controlPlane),
    },
    // The backend: e.g. the managed bus's readiness and its default-user Secret, from the caches.
    ...kind.backendWatches.map((watch) => ({
      kind: watch.kind,
      clusters: "management" as const,
      labelSelector: watch.labelSelector,
      map: ordersOfBackend(watch),
    })),
  ];
}
