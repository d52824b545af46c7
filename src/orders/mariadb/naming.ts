// Names, labels and paths of a MariaDBDatabase order: the core's naming scheme with the kind's prefix
// (`c5c3.io/mariadbdatabase`) and infix (`db`), the database on the server and the account of each
// password generation. Every name fits MariaDB's limits: a database name is at most 64 characters, an
// account name at most 80 (the User kind's spec.name).
import * as core from "../core/naming.ts";
import type { OrderKey } from "../core/naming.ts";

export const MARIADB_NAMING: core.NamingScheme = {
  apiVersion: "c5c3.io/v1alpha1",
  kind: "MariaDBDatabase",
  labelPrefix: "c5c3.io/mariadbdatabase",
  infix: "db",
  backupRoot: "openstack/mariadb",
};

/** MariaDB's longest account name the User kind accepts. */
export const MAX_USER_NAME = 80;
/** The order name's share of an account name: the rest is `-<8 hex>-v<N>` with N up to 16 digits. */
const USER_NAME_STEM = MAX_USER_NAME - "-12345678-v".length - 16;

/** The database on the server: spec.databaseName, else the order's name with every '-' turned into '_'. */
export function databaseName(order: { name: string; databaseName?: string | undefined }): string {
  return order.databaseName ?? order.name.replaceAll("-", "_");
}

/**
 * The account of password generation N: `<name, at most 53 characters>-<8 hex>-v<N>`. The hash covers
 * the order's cluster, namespace and whole name, so two orders never share an account even where their
 * names agree in the first 53 characters.
 */
export function userName(order: OrderKey, generation: number): string {
  return `${userNamePrefix(order)}${core.checkGeneration(generation)}`;
}

/** What every account of the order starts with: `<name, at most 53 characters>-<8 hex>-v`. */
export function userNamePrefix(order: OrderKey): string {
  return `${order.name.slice(0, USER_NAME_STEM)}-${core.orderHash(order)}-v`;
}

export const GENERATION_DISCRIMINATORS = ["password", "user", "grant"] as const;

/** The Database CR: `<name>-<8 hex>-db-database`. */
export const databaseChildName = (order: OrderKey): string =>
  `${core.childPrefix(MARIADB_NAMING, order)}database`;
export const passwordSecretName = (order: OrderKey, generation: number): string =>
  core.generationChildName(MARIADB_NAMING, order, "password", generation);
export const userChildName = (order: OrderKey, generation: number): string =>
  core.generationChildName(MARIADB_NAMING, order, "user", generation);
export const grantChildName = (order: OrderKey, generation: number): string =>
  core.generationChildName(MARIADB_NAMING, order, "grant", generation);

export const childLabels = (order: OrderKey): Record<string, string> =>
  core.childLabels(MARIADB_NAMING, order);

/** The OpenBao KV path of the backup: `openstack/mariadb/<cp ns>/<name>-<8 hex>-db/credentials`. */
export const backupPath = (order: OrderKey, controlPlaneNamespace: string): string =>
  core.backupPath(MARIADB_NAMING, order, controlPlaneNamespace);

export const childSelector = (order: OrderKey): string => core.childSelector(MARIADB_NAMING, order);
