// The gates every order kind passes before anything is provisioned or delivered: consent (admission)
// and the secret store; a kind adds its backend gate and its delivery endpoint (rabbitmq/backend-gates.ts).
// Each is a pure function of what the reconciler read; a closed gate says which reason both (or one)
// conditions carry, the message, when to look again (a Wake: after a delay, as a transient failure, or on
// the next event), and whether the order is frozen.
import { CoreReason as Reason, REQUEUE, coreMessages as messages } from "./conditions.ts";
import type { OrderKey } from "./naming.ts";
import { namespacesOutOfReach } from "../../runtime/base/secret-reach.ts";
import { parseEndpoint, type Endpoint } from "./endpoint.ts";
import { after, backoff, none, type Wake } from "./requeue.ts";

/** Which conditions a closed gate sets: both, the kind's resource condition, or DeliveryReady. */
export type GateScope = "both" | "resource" | "delivery";

export interface ClosedGate {
  reason: string;
  message: string;
  wake: Wake;
  scope: GateScope;
  /**
   * Consent is missing: the order holds no finalizer yet (or keeps the one it has), and nothing is
   * provisioned, rotated, delivered, repaired or removed; only a deletion still tears down.
   */
  frozen: boolean;
}

export type GateResult<T> = { open: true; value: T } | { open: false; gate: ClosedGate };

/** A closed gate is looked at again after `ms`, whatever wakes the order before. */
export const retryAfter = (ms: number): Wake => after(ms, "gate");
export const closed = <T>(gate: ClosedGate): GateResult<T> => ({ open: false, gate });
export const open = <T>(value: T): GateResult<T> => ({ open: true, value });

export interface NamespacedName {
  namespace: string;
  name: string;
}

/** The order as the gates read it. */
export interface OrderPlacement extends OrderKey {
  controlPlaneRef: { name: string; namespace?: string | undefined };
}

/** The ControlPlane fields orders read. */
export interface ControlPlaneView extends NamespacedName {
  namespaceAssignments?: readonly { namespace: string; targetClusterRef?: { name: string } | undefined }[];
  messaging?:
    { clusterRef?: { name: string } | undefined; secretRef?: { name: string } | undefined } | undefined;
  publishedMessagingEndpoint?: string | undefined;
  database?: { clusterRef: { name: string }; secretRef: { name: string } } | undefined;
  publishedDatabaseEndpoint?: string | undefined;
}

/** The longest label value; the cluster name is carried as one. */
export const MAX_LABEL_VALUE = 63;

/** The ControlPlane an order names; an empty ref namespace is the order's own. */
export function controlPlaneKey(order: OrderPlacement): NamespacedName {
  return { namespace: order.controlPlaneRef.namespace || order.namespace, name: order.controlPlaneRef.name };
}

/**
 * Consent: ClusterNameTooLong, then ControlPlaneNotFound (management cluster) or NamespaceNotAssigned
 * (a missing ControlPlane on a target cluster reads as unassigned, so that a tenant there cannot probe
 * which ControlPlanes exist), then the namespaceAssignments entry for the order's namespace and cluster.
 */
export function admissionGate(
  order: OrderPlacement,
  controlPlane: ControlPlaneView | undefined,
): GateResult<ControlPlaneView> {
  const frozen = (reason: string, message: string, wake: Wake) =>
    closed<ControlPlaneView>({ reason, message, wake, scope: "both", frozen: true });
  if (order.cluster.length > MAX_LABEL_VALUE) {
    return frozen(Reason.ClusterNameTooLong, messages.clusterNameTooLong(order.cluster), none);
  }
  const cpKey = controlPlaneKey(order);
  const unassigned = () =>
    frozen(
      Reason.NamespaceNotAssigned,
      messages.namespaceNotAssigned(cpKey, order.namespace, order.cluster),
      retryAfter(REQUEUE.unassigned),
    );
  if (!controlPlane) {
    if (order.cluster !== "") return unassigned();
    return frozen(
      Reason.ControlPlaneNotFound,
      messages.controlPlaneNotFound(cpKey),
      retryAfter(REQUEUE.short),
    );
  }
  const assigned = (controlPlane.namespaceAssignments ?? []).some(
    (a) => a.namespace === order.namespace && (a.targetClusterRef?.name ?? "") === order.cluster,
  );
  return assigned ? open(controlPlane) : unassigned();
}

/**
 * SecretsOutOfReach while --secret-namespaces leaves out a namespace whose Secrets the order needs on the
 * management cluster: the ControlPlane's (children, passwords, the backend's Secret) and, for an order
 * there, its own (the delivered Secret). Frozen like a missing consent: a new list restarts the process.
 */
export function secretReachGate(
  limit: readonly string[] | undefined,
  order: OrderKey,
  controlPlane: NamespacedName,
): GateResult<true> {
  const outside = namespacesOutOfReach(limit, [
    controlPlane.namespace,
    ...(order.cluster === "" ? [order.namespace] : []),
  ]);
  if (outside.length === 0) return open(true);
  return closed({
    reason: Reason.SecretsOutOfReach,
    message: messages.secretsOutOfReach(outside),
    wake: none,
    scope: "both",
    frozen: true,
  });
}

/**
 * What the teardown of an order may touch under --secret-namespaces. Its password Secrets are in the
 * ControlPlane's namespace: out of reach, nothing is deleted (users and their Secrets go together or
 * not at all) and the finalizer stays until the namespace is listed or a person removes it; Ready says
 * what that leaves behind. The delivered Secret beside an order on the management cluster carries the
 * order's owner reference: out of reach, it is left to the garbage collector, which removes it with the
 * order, and the rest of the teardown goes ahead.
 */
export function teardownReachGate(
  limit: readonly string[] | undefined,
  order: OrderKey,
  controlPlaneNamespace: string,
  leftovers: { finalizer: string; selector: string },
): GateResult<{ deliveredSecret: boolean }> {
  const outside = namespacesOutOfReach(limit, [controlPlaneNamespace]);
  if (outside.length > 0) {
    return closed({
      reason: Reason.SecretsOutOfReach,
      message: messages.teardownOutOfReach(outside, controlPlaneNamespace, leftovers),
      wake: none,
      scope: "both",
      frozen: true,
    });
  }
  const home = order.cluster === "" ? [order.namespace] : [];
  return open({ deliveredSecret: namespacesOutOfReach(limit, home).length === 0 });
}

/** The secret store's state as the backup reports it (see src/backup). */
export interface StoreReadiness {
  ready: boolean;
  /** Why it cannot be used; free of tokens. */
  message?: string | undefined;
}

/**
 * SecretStoreNotReady on VhostReady until OpenBao can be used; looked at again after 10 s. An outage is
 * a transient failure, not a wait: it counts as a reconcile error, so that the error alerts fire.
 */
export function secretStoreGate(store: StoreReadiness): GateResult<true> {
  if (store.ready) return open(true);
  const message = messages.secretStoreNotReady(store.message ?? "no reason given");
  return closed({
    reason: Reason.SecretStoreNotReady,
    message,
    wake: backoff(message, REQUEUE.short),
    scope: "resource",
    frozen: false,
  });
}

/**
 * The address a delivered Secret names: the backend's own on the management cluster, the ControlPlane's
 * published endpoint on a target cluster (the kind's not-published reason without it, DeliveryError
 * when it does not parse). Neither refusal is retried: a ControlPlane change wakes the order.
 */
export function publishedEndpointGate(
  order: OrderKey,
  own: Endpoint,
  published: { text: string | undefined; what: string; notPublished: { reason: string; message: string } },
): GateResult<Endpoint> {
  if (order.cluster === "") return open(own);
  const refuse = (reason: string, message: string) =>
    closed<Endpoint>({ reason, message, wake: none, scope: "delivery", frozen: false });
  if (!published.text) return refuse(published.notPublished.reason, published.notPublished.message);
  const parsed = parseEndpoint(published.text, published.what);
  if (!parsed.ok) return refuse(Reason.DeliveryError, parsed.message);
  return open(parsed.value);
}
