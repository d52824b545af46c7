// Names of a RabbitMQVhost order: its naming scheme (the core's labels, finalizer, child prefix and
// backup path follow from it, see ../core/naming.ts), the vhost, the user of each password generation and
// the name of each child. They must match the original implementation byte for byte.
import { RABBITMQVHOST_CHILD_PREFIX, TOPOLOGY_SECRET_LABEL } from "../../api/contracts.ts";
import * as core from "../core/naming.ts";
import type { OrderKey } from "../core/naming.ts";

export const ORDER_API_VERSION = "c5c3.io/v1alpha1";
export const ORDER_KIND = "RabbitMQVhost";

export const RABBITMQ_NAMING: core.NamingScheme = {
  apiVersion: ORDER_API_VERSION,
  kind: ORDER_KIND,
  labelPrefix: RABBITMQVHOST_CHILD_PREFIX,
  infix: "vhost",
  backupRoot: "openstack/rabbitmq",
};

/** The vhost on the broker: `<name>-<8 hex>`. */
export const vhostName = (order: OrderKey): string => core.resourceName(order);

/** The broker user of password generation N: `<vhost>-v<N>`. */
export function userName(order: OrderKey, generation: number): string {
  return `${vhostName(order)}-v${core.checkGeneration(generation)}`;
}

export type GenerationDiscriminator = (typeof GENERATION_DISCRIMINATORS)[number];

/** A child named by its discriminator: the Vhost CR, or one piece of a password generation. */
export type ChildId =
  { discriminator: "vhost" } | { discriminator: GenerationDiscriminator; generation: number };

export function childName(order: OrderKey, child: ChildId): string {
  if (child.discriminator === "vhost") return `${core.childPrefix(RABBITMQ_NAMING, order)}vhost`;
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
  if (name === `${core.childPrefix(RABBITMQ_NAMING, order)}vhost`) return { discriminator: "vhost" };
  return core.parseGenerationChildName(RABBITMQ_NAMING, order, name, GENERATION_DISCRIMINATORS);
}

/** The password Secret's labels: the child labels plus the topology operator's import label. */
export function passwordSecretLabels(order: OrderKey): Record<string, string> {
  return { ...core.childLabels(RABBITMQ_NAMING, order), [TOPOLOGY_SECRET_LABEL]: "true" };
}
