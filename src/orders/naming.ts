// Names, labels and paths derived from a RabbitMQVhost order. They must match the original
// implementation byte for byte: a re-created order reattaches to its retained vhost only because the
// same order always yields the same names.
import { createHash } from "node:crypto";

/** The management cluster's name in hashes, labels and messages. */
export const MANAGEMENT_CLUSTER = "";

/** Where an order lives: its cluster ("" for the management cluster), namespace and name. */
export interface OrderKey {
  cluster: string;
  namespace: string;
  name: string;
}

export const ORDER_API_VERSION = "c5c3.io/v1alpha1";
export const ORDER_KIND = "RabbitMQVhost";

export const LABEL_ORDER_NAME = "c5c3.io/rabbitmqvhost-name";
export const LABEL_ORDER_NAMESPACE = "c5c3.io/rabbitmqvhost-namespace";
export const LABEL_ORDER_CLUSTER = "c5c3.io/rabbitmqvhost-cluster";
/** The label the topology operator finds imported user credentials by (upstream 1.20+). */
export const LABEL_TOPOLOGY_OPERATOR = "rabbitmq.com/topology-operator";

export const TEARDOWN_FINALIZER = "c5c3.io/rabbitmqvhost-teardown";

/** First 8 lowercase hex digits of SHA-256 over `<cluster>/<namespace>/<name>`. */
export function orderHash(order: OrderKey): string {
  const input = `${order.cluster}/${order.namespace}/${order.name}`;
  return createHash("sha256").update(input, "utf8").digest("hex").slice(0, 8);
}

/** The vhost on the broker: `<name>-<8 hex>`. */
export function vhostName(order: OrderKey): string {
  return `${order.name}-${orderHash(order)}`;
}

/** The per-order prefix of every child: `<name>-<8 hex>-vhost-`. */
export function childPrefix(order: OrderKey): string {
  return `${vhostName(order)}-vhost-`;
}

/** The broker user of password generation N: `<vhost>-v<N>`. */
export function userName(order: OrderKey, generation: number): string {
  return `${vhostName(order)}-v${checkGeneration(generation)}`;
}

export type GenerationDiscriminator = "password" | "user" | "permission";

/** A child named by its discriminator: the Vhost CR, or one piece of a password generation. */
export type ChildId =
  { discriminator: "vhost" } | { discriminator: GenerationDiscriminator; generation: number };

export function childName(order: OrderKey, child: ChildId): string {
  const prefix = childPrefix(order);
  if (child.discriminator === "vhost") return `${prefix}vhost`;
  return `${prefix}${child.discriminator}-v${checkGeneration(child.generation)}`;
}

export const vhostChildName = (order: OrderKey): string => childName(order, { discriminator: "vhost" });
export const passwordSecretName = (order: OrderKey, generation: number): string =>
  childName(order, { discriminator: "password", generation });
export const userChildName = (order: OrderKey, generation: number): string =>
  childName(order, { discriminator: "user", generation });
export const permissionChildName = (order: OrderKey, generation: number): string =>
  childName(order, { discriminator: "permission", generation });

const generationPart = /^(password|user|permission)-v([1-9][0-9]*)$/;

/**
 * Reads a child name of this order back into its discriminator and generation. Anything else (another
 * prefix, an unknown discriminator, a generation with leading zeros or beyond a safe integer) is undefined,
 * so that a parsed name always renders back to itself.
 */
export function parseChildName(order: OrderKey, name: string): ChildId | undefined {
  const prefix = childPrefix(order);
  if (!name.startsWith(prefix)) return undefined;
  const rest = name.slice(prefix.length);
  if (rest === "vhost") return { discriminator: "vhost" };
  const m = generationPart.exec(rest);
  if (!m) return undefined;
  const generation = Number(m[2]);
  if (!Number.isSafeInteger(generation)) return undefined;
  return { discriminator: m[1] as GenerationDiscriminator, generation };
}

/** The three labels every child carries; the cluster label is present and empty on the management cluster. */
export function childLabels(order: OrderKey): Record<string, string> {
  return {
    [LABEL_ORDER_NAME]: order.name,
    [LABEL_ORDER_NAMESPACE]: order.namespace,
    [LABEL_ORDER_CLUSTER]: order.cluster,
  };
}

/** The password Secret's labels: the child labels plus the topology operator's import label. */
export function passwordSecretLabels(order: OrderKey): Record<string, string> {
  return { ...childLabels(order), [LABEL_TOPOLOGY_OPERATOR]: "true" };
}

/** A label selector for the order's children (an empty value selects the empty label). */
export function childSelector(order: OrderKey): string {
  return Object.entries(childLabels(order))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/**
 * The delivered Secret's labels: name and namespace only. Without the cluster label the teardown's child
 * selector never matches it.
 */
export function deliveredSecretLabels(order: OrderKey): Record<string, string> {
  return { [LABEL_ORDER_NAME]: order.name, [LABEL_ORDER_NAMESPACE]: order.namespace };
}

export function deliveredSecretName(order: Pick<OrderKey, "name">): string {
  return `${order.name}-credentials`;
}

/** The OpenBao KV path of the backup: `openstack/rabbitmq/<cp ns>/<prefix without its dash>/credentials`. */
export function backupPath(order: OrderKey, controlPlaneNamespace: string): string {
  return `openstack/rabbitmq/${controlPlaneNamespace}/${childPrefix(order).slice(0, -1)}/credentials`;
}

/** The metadata of an existing object that might be one of the order's children. */
export interface ObjectMeta {
  name: string;
  labels?: Record<string, string> | undefined;
  ownerReferences?: OwnerReference[] | undefined;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean | undefined;
}

/** An order as an owner: its key and, once read from the API, its uid. */
export interface OrderIdentity extends OrderKey {
  uid?: string | undefined;
}

/** True when `ref` is a controller reference to this order (its uid must match when the order's is known). */
export function isControllerRefTo(order: OrderIdentity, ref: OwnerReference): boolean {
  return (
    ref.controller === true &&
    ref.kind === ORDER_KIND &&
    ref.apiVersion.split("/")[0] === ORDER_API_VERSION.split("/")[0] &&
    ref.name === order.name &&
    (order.uid === undefined || ref.uid === order.uid)
  );
}

/**
 * A child counts as the order's only if its name carries the order's prefix and it has either the three
 * labels with the order's values or a controller owner reference to the order. An object of a child's name
 * that fails this is never adopted.
 */
export function isOwnChild(order: OrderIdentity, meta: ObjectMeta): boolean {
  if (!meta.name.startsWith(childPrefix(order))) return false;
  const labels = meta.labels ?? {};
  const labelled = Object.entries(childLabels(order)).every(([k, v]) => labels[k] === v);
  return labelled || (meta.ownerReferences ?? []).some((ref) => isControllerRefTo(order, ref));
}

function checkGeneration(generation: number): number {
  if (!Number.isSafeInteger(generation) || generation < 1) {
    throw new RangeError(`a password generation is a positive integer, not ${generation}`);
  }
  return generation;
}
