// Shared pieces of the SQL controller's integration tests: the local MariaDB as its administrator, a
// login as another account, the four CRDs, and reading and writing the resources and Secrets.
import { randomBytes } from "node:crypto";
import * as k8s from "@kubernetes/client-node";
import mysql from "mysql2/promise";
import { installCrds } from "./managed-bus.ts";
import { sqlKinds, type KindRef } from "../../src/api/index.ts";
import { defaultTransport } from "../../src/mariadb/client.ts";
import { accountName, nativePasswordHash, quoteIdentifier } from "../../src/mariadb/sql-text.ts";
import { connectServer, type SqlServer } from "../../src/sql/statements/index.ts";
import { localEnv } from "./env.ts";
import { getResource as getObject, tearDownObjects } from "./custom-objects.ts";
import { freshNamespace, isApiError, testCluster } from "./kube.ts";

export { createResource, custom, deleteResource, patchSpec } from "./custom-objects.ts";

export const env = localEnv();
export const cluster = testCluster("management");

export function adminServer(): SqlServer {
  return connectServer({
    host: env.MARIADB_HOST,
    port: env.MARIADB_PORT,
    username: env.MARIADB_ADMIN_USERNAME,
    password: env.MARIADB_ADMIN_PASSWORD,
    transport: { ...defaultTransport, connectTimeoutMs: 5_000 },
  });
}

/**
 * An account with every privilege, as a ControlPlane's or the settings' administrator would be: the
 * operator under test logs in as it, so a test can change its password without touching the
 * environment's own administrator.
 */
export async function createAdminAccount(server: SqlServer, name: string, password: string): Promise<void> {
  // The password travels as its hash, as the SQL controller sends it: no character needs quoting.
  await server.run(
    `CREATE USER ${accountName(name, "%")} IDENTIFIED BY PASSWORD '${nativePasswordHash(password)}'`,
  );
  await server.run(`GRANT ALL PRIVILEGES ON *.* TO ${accountName(name, "%")} WITH GRANT OPTION`);
}

/** What an administrator's password change on the server is, for a test that rotates one. */
export async function setAccountPassword(server: SqlServer, name: string, password: string): Promise<void> {
  await server.run(
    `ALTER USER ${accountName(name, "%")} IDENTIFIED BY PASSWORD '${nativePasswordHash(password)}'`,
  );
}

/** Drops what a test file made on the server; each drop is tried whatever became of the others. */
export async function dropFromServer(
  server: SqlServer,
  made: { databases: Iterable<string>; accounts: Iterable<string> },
): Promise<void> {
  for (const name of made.databases)
    await server.run(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)}`).catch(() => undefined);
  for (const name of made.accounts)
    await server.run(`DROP USER IF EXISTS ${accountName(name, "%")}`).catch(() => undefined);
}

/** A short random suffix, so that runs never share a name on the server. */
export function unique(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString("hex")}`;
}

/** Logs in as `user` and runs `sql`; the rows, or the server's error. */
export async function asUser(
  user: string,
  password: string,
  sql: string,
  options: { database?: string; host?: string; port?: number } = {},
): Promise<unknown[]> {
  const connection = await mysql.createConnection({
    host: options.host ?? env.MARIADB_HOST,
    port: options.port ?? env.MARIADB_PORT,
    user,
    password,
    ...(options.database ? { database: options.database } : {}),
  });
  try {
    const [rows] = await connection.query(sql);
    return rows as unknown[];
  } finally {
    await connection.end();
  }
}

/** Every CRD installed (an operator process waits for all its caches) and a fresh namespace. */
export async function setUpNamespace(prefix: string): Promise<string> {
  await installCrds(cluster.config);
  return freshNamespace(cluster, prefix);
}

/** Removes every SQL object in `namespace` (finalizers first, so nothing is dropped), then the namespace. */
export const tearDownNamespace = (namespace: string): Promise<void> => tearDownObjects(namespace, sqlKinds);

export interface SqlResource {
  metadata: { name: string; uid: string; generation: number; finalizers?: string[] };
  spec: Record<string, unknown>;
  status?: {
    conditions?: {
      type: string;
      status: string;
      reason: string;
      message: string;
      lastTransitionTime: string;
      observedGeneration?: number;
    }[];
  };
}

export const getResource = (kind: KindRef, namespace: string, name: string) =>
  getObject<SqlResource>(kind, namespace, name);

export function ready(resource: SqlResource | undefined) {
  return resource?.status?.conditions?.find((c) => c.type === "Ready");
}

/** A password Secret, labelled as upstream's watched Secrets are, so that a change arrives at once. */
export async function writePasswordSecret(namespace: string, name: string, password: string): Promise<void> {
  const body = {
    metadata: { name, namespace, labels: { "k8s.mariadb.com/watch": "" } },
    stringData: { password },
  };
  try {
    await cluster.core.createNamespacedSecret({ namespace, body });
  } catch (error) {
    if (!isApiError(error, 409)) throw error;
    await cluster.core.replaceNamespacedSecret({ namespace, name, body });
  }
}

export async function readSecret(namespace: string, name: string): Promise<k8s.V1Secret | undefined> {
  try {
    return await cluster.core.readNamespacedSecret({ namespace, name });
  } catch (error) {
    if (isApiError(error, 404)) return undefined;
    throw error;
  }
}

export function secretText(secret: k8s.V1Secret | undefined, key: string): string | undefined {
  const value = secret?.data?.[key];
  return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8");
}
