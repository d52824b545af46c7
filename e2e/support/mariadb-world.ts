// What the MariaDBDatabase e2e files (e2e/mariadb-orders, e2e/mariadb-tls, e2e/oslo-db,
// e2e/mariadb-hardened) make and read around the operator: the flags it runs their orders with, objects
// applied as the e2e field manager, the managed MariaDB a ControlPlane declares (its credentials Secret
// and a MariaDB reported Ready) and a tenant namespace it assigns, the orders and their conditions, a
// Secret's keys, and a consumer's login with a delivered Secret's keys.
import * as k8s from "@kubernetes/client-node";
import { controlPlaneKind, mariaDBDatabaseKind, mariaDBKind, type KindRef } from "../../src/api/index.ts";
import { localEnv } from "../../harness/world/env.ts";
import { freshNamespace, isApiError, testCluster } from "../../harness/world/kube.ts";
import { installCrds } from "../../harness/world/managed-bus.ts";
import { asUser, custom, readSecret } from "../../harness/world/sql.ts";
import type { LoginOutcome } from "../../harness/probes/login-prober.ts";

const ssa = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.ServerSideApply);
const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);

/**
 * The operator's flags for MariaDBDatabase orders and the built-in SQL controller on the local MariaDB,
 * logged in as `username` (its password goes in VHOST_BROKER_MARIADB_PASSWORD), with short waits;
 * `more` before the waits (TLS, say).
 */
export function mariadbOrderArgs(username: string, requeue: string, more: string[] = []): string[] {
  const env = localEnv();
  return [
    "--topology-controller=false",
    "--mariadb-orders",
    "--sql-controller",
    `--mariadb-host=${env.MARIADB_HOST}`,
    `--mariadb-port=${env.MARIADB_PORT}`,
    `--mariadb-username=${username}`,
    ...more,
    "--sql-verification-period=3s",
    "--connection-wait-interval=1s",
    `--transient-requeue-interval=${requeue}`,
  ];
}

export const group = (kind: KindRef) => ({ group: kind.group, version: kind.version, plural: kind.plural });

/** `body` applied as the object `name` of `kind` (server-side, field manager e2e, forced). */
export async function apply(
  kind: KindRef,
  namespace: string,
  name: string,
  body: Record<string, unknown>,
  api: k8s.CustomObjectsApi = custom,
) {
  await api.patchNamespacedCustomObject(
    {
      ...group(kind),
      namespace,
      name,
      body: { apiVersion: kind.apiVersion, kind: kind.kind, metadata: { name, namespace }, ...body },
      fieldManager: "e2e",
      force: true,
    },
    ssa,
  );
}

/** The MariaDB `mariadb` in `namespace`, reported Ready, and its credentials Secret `mariadb-admin`. */
export async function managedMariaDB(
  core: k8s.CoreV1Api,
  api: k8s.CustomObjectsApi,
  namespace: string,
  credentials: Record<string, string>,
): Promise<void> {
  await core.createNamespacedSecret({
    namespace,
    body: { metadata: { name: "mariadb-admin" }, stringData: credentials },
  });
  await apply(mariaDBKind, namespace, "mariadb", { spec: {} }, api);
  await api.patchNamespacedCustomObjectStatus(
    {
      ...group(mariaDBKind),
      namespace,
      name: "mariadb",
      body: {
        status: { conditions: [{ type: "Ready", status: "True", reason: "Ready", message: "local" }] },
      },
    },
    merge,
  );
}

/**
 * A ControlPlane namespace with the managed MariaDB (the environment's administrator) and the
 * ControlPlane `cp` declaring it, which assigns a fresh tenant namespace.
 */
export async function assignedTenant(prefix: string): Promise<{ cpNs: string; tenantNs: string }> {
  const env = localEnv();
  const cluster = testCluster("management");
  await installCrds(cluster.config);
  const cpNs = await freshNamespace(cluster, `${prefix}-cp`);
  const tenantNs = await freshNamespace(cluster, `${prefix}-tenant`);
  await managedMariaDB(cluster.core, custom, cpNs, {
    username: env.MARIADB_ADMIN_USERNAME,
    password: env.MARIADB_ADMIN_PASSWORD,
    host: env.MARIADB_HOST,
    port: String(env.MARIADB_PORT),
  });
  await apply(controlPlaneKind, cpNs, "cp", {
    spec: {
      namespaceAssignments: [{ namespace: tenantNs }],
      infrastructure: { database: { clusterRef: { name: "mariadb" }, secretRef: { name: "mariadb-admin" } } },
    },
  });
  return { cpNs, tenantNs };
}

/** The MariaDBDatabase order `name`, undefined when there is none. */
export async function readMariaDBOrder(namespace: string, name: string): Promise<Order | undefined> {
  try {
    return (await custom.getNamespacedCustomObject({
      ...group(mariaDBDatabaseKind),
      namespace,
      name,
    })) as Order;
  } catch (error) {
    if (isApiError(error, 404)) return undefined;
    throw error;
  }
}

/** A Secret's data, decoded; its password added to `seen`, for the searches of logs and status. */
export async function secretData(
  namespace: string,
  name: string,
  seen: Set<string>,
): Promise<Record<string, string>> {
  const secret = await readSecret(namespace, name);
  const data = Object.fromEntries(
    Object.entries(secret?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
  );
  if (data["password"]) seen.add(data["password"]);
  return data;
}

export interface Order {
  metadata: { name: string; generation: number };
  status?: {
    conditions?: { type: string; status: string; reason: string; message: string }[];
    passwordGeneration?: number;
    previousPasswordDeleteAt?: string;
    username?: string;
    database?: string;
  };
}

export const conditionOf = (o: Order | undefined, type: string) =>
  o?.status?.conditions?.find((c) => c.type === type);
export const readyOf = (o: Order | undefined) => conditionOf(o, "Ready");

/** A login with the delivered Secret's keys, as a consumer would make it; true or the server's error. */
export async function logIn(data: Record<string, string>, sql = "SELECT 1"): Promise<unknown[]> {
  return asUser(data["username"] ?? "", data["password"] ?? "", sql, {
    host: data["host"],
    port: Number(data["port"]),
    database: data["database"],
  });
}

export const refused = (data: Record<string, string>) =>
  logIn(data).then(
    () => false,
    // An unknown account is refused with ER_ACCESS_DENIED_ERROR or ER_ACCESS_DENIED_NO_PASSWORD_ERROR.
    (error: { code?: string }) => error.code?.startsWith("ER_ACCESS_DENIED") === true,
  );

/** The consumer's login for the prober: the delivered keys, the server's verdict. */
export async function sqlLogin(data: Record<string, string>): Promise<LoginOutcome> {
  try {
    await logIn(data);
    return { kind: "ok" };
  } catch (error) {
    const code = (error as { code?: string }).code ?? "no code";
    return code.startsWith("ER_ACCESS_DENIED") || code === "ER_DBACCESS_DENIED_ERROR"
      ? { kind: "auth", message: code }
      : { kind: "other", message: code };
  }
}
