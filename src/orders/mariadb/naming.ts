// Names, labels and paths of a MariaDBDatabase order: the core's naming scheme with the kind's prefix
// (`c5c3.io/mariadbdatabase`) and infix (`db`), the database on the server and the account of each
// password generation, and the claim its SQL objects carry. Every name fits MariaDB's limits: a
// database name is at most 64 characters, an account name at most 80 (the User kind's spec.name).
import { createHash } from "node:crypto";
import * as core from "../core/naming.ts";
import type { OrderKey } from "../core/naming.ts";
import { MARIADBDATABASE_CHILD_PREFIX } from "../../api/contracts.ts";
import { isReservedSchema } from "../../api/index.ts";

export const MARIADB_NAMING: core.NamingScheme = {
  apiVersion: "c5c3.io/v1alpha1",
  kind: "MariaDBDatabase",
  labelPrefix: MARIADBDATABASE_CHILD_PREFIX,
  infix: "db",
  backupRoot: "openstack/mariadb",
};

/** MariaDB's longest account name the User kind accepts. */
export const MAX_USER_NAME = 80;
/** MariaDB's longest database name. */
export const MAX_DATABASE_NAME = 64;
/** The longest generation suffix: `-v` and a safe integer's 16 digits. */
const GENERATION_SUFFIX = "-v".length + 16;
/** The longest order name an account holds whole: `<name>-<8 hex>-v<N>` fits 80 characters. */
export const WHOLE_NAME_IN_ACCOUNT = MAX_USER_NAME - "-12345678".length - GENERATION_SUFFIX;
/** The long hash: 128 bits of SHA-256 over the order's identity, beyond any collision search. */
const LONG_HASH = 32;
const ACCOUNT_STEM = MAX_USER_NAME - 1 - LONG_HASH - GENERATION_SUFFIX;
const DATABASE_STEM = MAX_DATABASE_NAME - 1 - LONG_HASH;

/** The first `length` hex digits of SHA-256 over `<cluster>/<namespace>/<name>` (the core's hash at 8). */
export function identityHash(order: OrderKey, length: number): string {
  const input = `${order.cluster}/${order.namespace}/${order.name}`;
  return createHash("sha256").update(input, "utf8").digest("hex").slice(0, length);
}

/**
 * The order's default database: `<name, '-' as '_', at most 31 characters>_<32 hex>`, 64 at most. The
 * hash covers the order's cluster, namespace and name, so two orders never derive the same schema.
 */
export function defaultDatabaseName(order: OrderKey): string {
  return `${order.name.replaceAll("-", "_").slice(0, DATABASE_STEM)}_${identityHash(order, LONG_HASH)}`;
}

/**
 * The database on the server: spec.databaseName; else the one the order's status already names (an
 * order provisioned before defaults were hashed keeps its `<name with '_'>` schema); else the default.
 */
export function databaseName(
  order: OrderKey & { databaseName?: string | undefined; provisioned?: string | undefined },
): string {
  return order.databaseName ?? (order.provisioned || defaultDatabaseName(order));
}

/** A database name the status holds, when it could be one an order was given (not a reserved schema). */
export function provisionedDatabase(value: unknown): string | undefined {
  if (typeof value !== "string" || !/^[A-Za-z0-9_$]{1,64}$/.test(value)) return undefined;
  return isReservedSchema(value) ? undefined : value;
}

/**
 * The account of password generation N. A name of at most 53 characters is held whole:
 * `<name>-<8 hex>-v<N>`, the scheme of the vhost's users, where nothing is cut off for a collision
 * search to vary. A longer name would be cut, so its account is `<name, first 29 characters>-<32 hex>-v<N>`.
 * Either fits 80 characters, and neither scheme's names can be the other's.
 */
export function userName(order: OrderKey, generation: number, legacy = false): string {
  return `${userNamePrefix(order, legacy)}${core.checkGeneration(generation)}`;
}

/**
 * What every account of the order starts with: userName without the generation's number. `legacy`:
 * the scheme before issue 31, `<name, cut to 53 characters>-<8 hex>-v`, which only an order whose Users
 * already hold such accounts keeps (see legacyAccounts); for a name of at most 53 it is the same.
 */
export function userNamePrefix(order: OrderKey, legacy = false): string {
  if (legacy || order.name.length <= WHOLE_NAME_IN_ACCOUNT) {
    return `${order.name.slice(0, WHOLE_NAME_IN_ACCOUNT)}-${core.orderHash(order)}-v`;
  }
  return `${order.name.slice(0, ACCOUNT_STEM)}-${identityHash(order, LONG_HASH)}-v`;
}

/**
 * Whether an order of a name over 53 characters made its accounts before issue 31: a User child of it
 * (only the operator writes them) names an account of the old scheme. Its accounts keep that scheme, so
 * that its delivered Secret, its rotations and its sweep go on as before.
 */
export function legacyAccounts(order: OrderKey, accounts: readonly string[]): boolean {
  if (order.name.length <= WHOLE_NAME_IN_ACCOUNT) return false;
  const prefix = userNamePrefix(order, true);
  return accounts.some((account) => account.startsWith(prefix));
}

/** The claim a child's SQL objects carry (src/api/sql-claim.ts): the order's kind and identity. */
export const sqlClaim = (order: OrderKey): string =>
  `${MARIADB_NAMING.kind} ${order.cluster}/${order.namespace}/${order.name}`;

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
