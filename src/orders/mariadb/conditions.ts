// The MariaDBDatabase order's conditions: seed 001's pattern in the words of a database. The order
// machinery's reasons (core) joined with the MariaDB leg's own, and every message the leg writes. No
// message here takes a password, a token or a connection URL.
import { CoreReason, coreMessages, location } from "../core/conditions.ts";
import type { ViewWords } from "../core/generations.ts";
import { CA_KEY, DELIVERED_KEYS } from "./delivered-data.ts";

export const DATABASE_READY = "DatabaseReady";

export const Reason = {
  ...CoreReason,
  // DatabaseReady
  DatabaseProvisioned: "DatabaseProvisioned",
  SqlOperatorNotInstalled: "SqlOperatorNotInstalled",
  WaitingForSchema: "WaitingForSchema",
  WaitingForUser: "WaitingForUser",
  DatabaseFailed: "DatabaseFailed",
  DatabaseError: "DatabaseError",
  // DeliveryReady
  DatabaseNotPublished: "DatabaseNotPublished",
  // both sub-conditions
  DatabaseNotDeclared: "DatabaseNotDeclared",
  WaitingForDatabaseCredentials: "WaitingForDatabaseCredentials",
  WaitingForDatabase: "WaitingForDatabase",
} as const;

export type ReasonName = (typeof Reason)[keyof typeof Reason];

/** As for a RabbitMQVhost: waits are Normal events, a failed child write (retried) makes none. */
export const eventTypes = {
  WaitingForSchema: "Normal",
  WaitingForUser: "Normal",
  WaitingForDatabase: "Normal",
  WaitingForDatabaseCredentials: "Normal",
  DatabaseError: "none",
} as const satisfies Partial<Record<ReasonName, "Normal" | "none">>;

/** How DatabaseReady's messages name the pieces of a MariaDBDatabase. */
export const viewWords: ViewWords = {
  operator: "the SQL operator",
  resource: "database",
  accountKind: "User",
  access: "grant",
  accessKind: "Grant",
  backend: "the server",
  // Condition messages keep the words they were released with (the RabbitMQ leg's), also for a Grant.
  pieces: { passwordSecret: "passwordSecret", account: "user", access: "permission" },
};

const key = (namespace: string, name: string): string => `${namespace}/${name}`;
type Ref = { namespace: string; name: string };

export const messages = {
  ...coreMessages,
  databaseNotDeclared: (cp: Ref): string =>
    `ControlPlane ${key(cp.namespace, cp.name)} declares no spec.infrastructure.database; a database is ordered on a managed MariaDB only`,
  mariadbMissing: (mariadb: Ref): string =>
    `waiting for MariaDB ${key(mariadb.namespace, mariadb.name)} to exist`,
  credentialsSecretMissing: (mariadb: Ref, secret: Ref): string =>
    `waiting for the credentials Secret ${key(secret.namespace, secret.name)} of MariaDB ${key(mariadb.namespace, mariadb.name)}`,
  credentialsSecretIncomplete: (secret: Ref, missing: readonly string[]): string =>
    `the credentials Secret ${key(secret.namespace, secret.name)} lacks ${missing.map((k) => `"${k}"`).join(", ")}; waiting for it to be complete`,
  credentialsSecretBadPort: (secret: Ref, why: string): string =>
    `the credentials Secret ${key(secret.namespace, secret.name)} names no usable port: ${why}`,
  credentialsSecretBadHost: (secret: Ref, why: string): string =>
    `the credentials Secret ${key(secret.namespace, secret.name)} names no usable host: ${why}`,
  waitingForDatabase: (mariadb: Ref): string =>
    `waiting for MariaDB ${key(mariadb.namespace, mariadb.name)} to report Ready`,
  serverReadFailed: (what: string, cause: string): string => `reading ${what} failed: ${cause}`,
  sqlOperatorNotInstalled: (): string =>
    "the management cluster serves no mariadb.osh.openstack.org/v1alpha1 Database; enable vhost-broker's built-in SQL controller (--sql-controller) or install an operator that serves the kind; retried every 10 minutes",
  waitingForSchema: (database: string): string =>
    `waiting for the SQL operator to report database "${database}" Ready`,
  databaseFailed: (database: string, operatorMessage: string): string =>
    `the SQL operator cannot create database "${database}": ${operatorMessage}`,
  databaseTaken: (database: string, namespace: string, owner: string): string =>
    `database "${database}" is ordered already by the Database ${key(namespace, owner)}, which this order did not create; two orders never share a database`,
  delivered: (secret: string, namespace: string, cluster: string): string =>
    `credentials are delivered in Secret "${secret}" (keys ${DELIVERED_KEYS.join(", ")}, and ${CA_KEY} with TLS) in namespace "${namespace}" on ${location(cluster)}`,
  databaseNotPublished: (cp: Ref, cluster: string): string =>
    `the order lives on ${location(cluster)}, where the server's in-cluster address does not resolve, and ControlPlane ${key(cp.namespace, cp.name)} publishes no spec.infrastructure.publishedDatabaseEndpoint; the database is provisioned but nothing is delivered`,
  allReady: (): string => "the database is provisioned and its credentials are delivered",
} as const;
