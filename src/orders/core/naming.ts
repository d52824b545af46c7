// Names, labels and paths of an order kind's children, derived from the order and the kind's naming
// scheme. They must match the original implementation byte for byte: a re-created order reattaches to
// what a Retain deletion kept only because the same order always yields the same names.
import { createHash } from "node:crypto";
import { orderChildKeys } from "../../api/contracts.ts";
import { TerminalError } from "../../runtime/base/errors.ts";

/** The management cluster's name in hashes, labels and messages. */
export const MANAGEMENT_CLUSTER = "";

/** Where an order lives: its cluster ("" for the management cluster), namespace and name. */
export interface OrderKey {
  cluster: string;
  namespace: string;
  name: string;
}

/** An order as an owner: its key and, once read from the API, its uid. */
export interface OrderIdentity extends OrderKey {
  uid?: string | undefined;
}

/** What names an order kind's children: `c5c3.io/rabbitmqvhost` and `vhost` for a RabbitMQVhost. */
export interface NamingScheme {
  /** The order's apiVersion and kind, for owner references. */
  apiVersion: string;
  kind: string;
  /** Labels are `<prefix>-name`, `<prefix>-namespace`, `<prefix>-cluster`; the finalizer `<prefix>-teardown`. */
  labelPrefix: string;
  /** Children are named `<name>-<8 hex>-<infix>-<discriminator>`. */
  infix: string;
  /** The OpenBao path is `<backupRoot>/<cp namespace>/<name>-<8 hex>-<infix>/credentials`. */
  backupRoot: string;
}

/** First 8 lowercase hex digits of SHA-256 over `<cluster>/<namespace>/<name>`. */
export function orderHash(order: OrderKey): string {
  const input = `${order.cluster}/${order.namespace}/${order.name}`;
  return createHash("sha256").update(input, "utf8").digest("hex").slice(0, 8);
}

/** `<name>-<8 hex>`: the resource on the backend (the vhost, the database). */
export function resourceName(order: OrderKey): string {
  return `${order.name}-${orderHash(order)}`;
}

/** The per-order prefix of every child: `<name>-<8 hex>-<infix>-`. */
export function childPrefix(scheme: NamingScheme, order: OrderKey): string {
  return `${resourceName(order)}-${scheme.infix}-`;
}

export const labelKeys = (scheme: NamingScheme) => {
  const { name, namespace, cluster } = orderChildKeys(scheme.labelPrefix);
  return { name, namespace, cluster };
};

export const teardownFinalizer = (scheme: NamingScheme): string => `${scheme.labelPrefix}-teardown`;

/** `<prefix><discriminator>-v<N>`: one piece of password generation N (`user-v3`). */
export function generationChildName(
  scheme: NamingScheme,
  order: OrderKey,
  discriminator: string,
  generation: number,
): string {
  return `${childPrefix(scheme, order)}${discriminator}-v${checkGeneration(generation)}`;
}

const generationPart = /^([a-z]+)-v([1-9][0-9]*)$/;

/**
 * Reads a generation child's name of this order back into its discriminator (one of `discriminators`)
 * and generation. Anything else (another prefix, an unknown discriminator, a generation with leading
 * zeros or beyond a safe integer) is undefined, so that a parsed name always renders back to itself.
 */
export function parseGenerationChildName<D extends string>(
  scheme: NamingScheme,
  order: OrderKey,
  name: string,
  discriminators: readonly D[],
): { discriminator: D; generation: number } | undefined {
  const prefix = childPrefix(scheme, order);
  if (!name.startsWith(prefix)) return undefined;
  const m = generationPart.exec(name.slice(prefix.length));
  if (!m || !discriminators.includes(m[1] as D)) return undefined;
  const generation = Number(m[2]);
  if (!Number.isSafeInteger(generation)) return undefined;
  return { discriminator: m[1] as D, generation };
}

/**
 * A generation past 2^53-1, which the rotation's arithmetic can reach only from an order stored before
 * the CRD's bounds: no account of it is named, and the order says why (GenerationOutOfRange).
 */
export class GenerationOutOfRange extends TerminalError {
  override name = "GenerationOutOfRange";
  constructor(generation: number) {
    super(
      `password generation ${generation} is past ${Number.MAX_SAFE_INTEGER}, the largest the operator holds exactly; nothing is rotated: delete the order (its teardown runs) and create it again`,
      "GenerationOutOfRange",
    );
  }
}

/** A password generation is a positive safe integer. */
export function checkGeneration(generation: number): number {
  if (Number.isInteger(generation) && generation > Number.MAX_SAFE_INTEGER)
    throw new GenerationOutOfRange(generation);
  if (!Number.isSafeInteger(generation) || generation < 1) {
    throw new RangeError(`a password generation is a positive integer, not ${generation}`);
  }
  return generation;
}

/** The three labels every child carries; the cluster label is present and empty on the management cluster. */
export function childLabels(scheme: NamingScheme, order: OrderKey): Record<string, string> {
  const keys = labelKeys(scheme);
  return { [keys.name]: order.name, [keys.namespace]: order.namespace, [keys.cluster]: order.cluster };
}

/** A label selector for the order's children (an empty value selects the empty label). */
export function childSelector(scheme: NamingScheme, order: OrderKey): string {
  return Object.entries(childLabels(scheme, order))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/**
 * The delivered Secret's labels: name and namespace only. Without the cluster label the teardown's child
 * selector never matches it.
 */
export function deliveredSecretLabels(scheme: NamingScheme, order: OrderKey): Record<string, string> {
  const keys = labelKeys(scheme);
  return { [keys.name]: order.name, [keys.namespace]: order.namespace };
}

export function deliveredSecretName(order: Pick<OrderKey, "name">): string {
  return `${order.name}-credentials`;
}

/** The OpenBao KV path of the backup. */
export function backupPath(scheme: NamingScheme, order: OrderKey, controlPlaneNamespace: string): string {
  return `${scheme.backupRoot}/${controlPlaneNamespace}/${childPrefix(scheme, order).slice(0, -1)}/credentials`;
}

/** The metadata of an existing object that might be one of the order's children. */
export interface ObjectMeta {
  name: string;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
  ownerReferences?: OwnerReference[] | undefined;
}

/**
 * The annotation that records which order (uid) made a child: `<prefix>-uid`. An annotation, not a
 * label: nothing selects by it, and a uid says nothing a selector needs.
 */
export const uidAnnotation = (scheme: NamingScheme): string => orderChildKeys(scheme.labelPrefix).uid;

/** The annotations a child carries: the uid of the order that made it, once the order's uid is known. */
export function childAnnotations(scheme: NamingScheme, order: OrderIdentity): Record<string, string> {
  return order.uid ? { [uidAnnotation(scheme)]: order.uid } : {};
}

/**
 * A child of this order's identity that an earlier order of the same cluster, namespace and name made
 * (its recorded uid is another's): a leftover of a deletion that skipped the teardown, never adopted.
 * A child without a recorded uid (made before children recorded it) is not one.
 */
export function isEarlierOrders(scheme: NamingScheme, order: OrderIdentity, meta: ObjectMeta): boolean {
  const made = meta.annotations?.[uidAnnotation(scheme)];
  return order.uid !== undefined && made !== undefined && made !== order.uid;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean | undefined;
}

/** True when `ref` is a controller reference to this order (its uid must match when the order's is known). */
export function isControllerRefTo(scheme: NamingScheme, order: OrderIdentity, ref: OwnerReference): boolean {
  return (
    ref.controller === true &&
    ref.kind === scheme.kind &&
    ref.apiVersion.split("/")[0] === scheme.apiVersion.split("/")[0] &&
    ref.name === order.name &&
    (order.uid === undefined || ref.uid === order.uid)
  );
}

/**
 * A child counts as the order's only if its name carries the order's prefix, it has either the three
 * labels with the order's values or a controller owner reference to the order, and no earlier order of
 * the same identity made it. An object of a child's name that fails this is never adopted.
 */
export function isOwnChild(scheme: NamingScheme, order: OrderIdentity, meta: ObjectMeta): boolean {
  if (!meta.name.startsWith(childPrefix(scheme, order))) return false;
  if (isEarlierOrders(scheme, order, meta)) return false;
  const labels = meta.labels ?? {};
  const labelled = Object.entries(childLabels(scheme, order)).every(([k, v]) => labels[k] === v);
  return labelled || (meta.ownerReferences ?? []).some((ref) => isControllerRefTo(scheme, order, ref));
}

/** The controller owner reference a delivered Secret carries. */
export function controllerReference(scheme: NamingScheme, order: OrderIdentity) {
  return {
    apiVersion: scheme.apiVersion,
    kind: scheme.kind,
    name: order.name,
    uid: order.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}
