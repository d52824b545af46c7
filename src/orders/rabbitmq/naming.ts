// Names, labels and paths of a RabbitMQVhost order: the core's naming scheme with the kind's prefix
// (`c5c3.io/rabbitmqvhost`) and infix (`vhost`), and the pieces of a password generation. They must
// match the original implementation byte for byte.
import { TOPOLOGY_SECRET_LABEL } from "../../api/contracts.ts";
import * as core from "../core/naming.ts";
import type { OrderIdentity, OrderKey } from "../core/naming.ts";

export {
  MANAGEMENT_CLUSTER,
  deliveredSecretName,
  orderHash,
  type ObjectMeta,
  type OrderIdentity,
  type OrderKey,
  type OwnerReference,
} from "../core/naming.ts";

export const ORDER_API_VERSION = "c5c3.io/v1alpha1";
export const ORDER_KIND = "RabbitMQVhost";

export const RABBITMQ_NAMING: core.NamingScheme = {
  apiVersion: ORDER_API_VERSION,
  kind: ORDER_KIND,
  labelPrefix: "c5c3.io/rabbitmqvhost",
  infix: "vhost",
  backupRoot: "openstack/rabbitmq",
};

const labels = core.labelKeys(RABBITMQ_NAMING);
export const LABEL_ORDER_NAME = labels.name;
export const LABEL_ORDER_NAMESPACE = labels.namespace;
export const LABEL_ORDER_CLUSTER = labels.cluster;
/** The label the topology operator finds imported user credentials by (upstream 1.20+). */

export const TEARDOWN_FINALIZER = core.teardownFinalizer(RABBITMQ_NAMING);

/** The vhost on the broker: `<name>-<8 hex>`. */
export const vhostName = (order: OrderKey): string => core.resourceName(order);

/** The per-order prefix of every child: `<name>-<8 hex>-vhost-`. */
export const childPrefix = (order: OrderKey): string => core.childPrefix(RABBITMQ_NAMING, order);

/** The broker user of password generation N: `<vhost>-v<N>`. */
export function userName(order: OrderKey, generation: number): string {
  return `${vhostName(order)}-v${core.checkGeneration(generation)}`;
}

export type GenerationDiscriminator = (typeof GENERATION_DISCRIMINATORS)[number];

/** A child named by its discriminator: the Vhost CR, or one piece of a password generation. */
export type ChildId =
  { discriminator: "vhost" } | { discriminator: GenerationDiscriminator; generation: number };

export function childName(order: OrderKey, child: ChildId): string {
  if (child.discriminator === "vhost") return `${childPrefix(order)}vhost`;
  return core.generationChildName(RABBITMQ_NAMING, order, child.discriminator, child.generation);
}

export const vhostChildName = (order: OrderKey): string => childName(order, { discriminator: "vhost" });
export const passwordSecretName = (order: OrderKey, generation: number): string =>
  childName(order, { discriminator: "password", generation });
export const userChildName = (order: OrderKey, generation: number): string =>
  childName(order, { discriminator: "user", generation });
export const permissionChildName = (order: OrderKey, generation: number): string =>
  childName(order, { discriminator: "permission", generation });

export const GENERATION_DISCRIMINATORS = ["password", "user", "permission"] as const;

/**
 * Reads a child name of this order back into its discriminator and generation. Anything else (another
 * prefix, an unknown discriminator, a generation with leading zeros or beyond a safe integer) is undefined,
 * so that a parsed name always renders back to itself.
 */
export function parseChildName(order: OrderKey, name: string): ChildId | undefined {
  if (name === `${childPrefix(order)}vhost`) return { discriminator: "vhost" };
  return core.parseGenerationChildName(RABBITMQ_NAMING, order, name, GENERATION_DISCRIMINATORS);
}

/** The three labels every child carries; the cluster label is present and empty on the management cluster. */
export const childLabels = (order: OrderKey): Record<string, string> =>
  core.childLabels(RABBITMQ_NAMING, order);

/** The password Secret's labels: the child labels plus the topology operator's import label. */
export function passwordSecretLabels(order: OrderKey): Record<string, string> {
  return { ...childLabels(order), [TOPOLOGY_SECRET_LABEL]: "true" };
}

export const childSelector = (order: OrderKey): string => core.childSelector(RABBITMQ_NAMING, order);

export const deliveredSecretLabels = (order: OrderKey): Record<string, string> =>
  core.deliveredSecretLabels(RABBITMQ_NAMING, order);

/** The OpenBao KV path of the backup: `openstack/rabbitmq/<cp ns>/<prefix without its dash>/credentials`. */
export const backupPath = (order: OrderKey, controlPlaneNamespace: string): string =>
  core.backupPath(RABBITMQ_NAMING, order, controlPlaneNamespace);

export const isControllerRefTo = (order: OrderIdentity, ref: core.OwnerReference): boolean =>
  core.isControllerRefTo(RABBITMQ_NAMING, order, ref);

export const isOwnChild = (order: OrderIdentity, meta: core.ObjectMeta): boolean =>
  core.isOwnChild(RABBITMQ_NAMING, order, meta);
