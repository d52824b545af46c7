// What the MariaDBDatabase e2e files (e2e/mariadb-orders, e2e/mariadb-tls, e2e/oslo-db) make and read
// around the operator: the flags it runs their orders with, objects applied as the e2e field manager,
// the managed MariaDB a ControlPlane declares (its credentials Secret and a MariaDB reported Ready), the
// orders' conditions, and a consumer's login with a delivered Secret's keys.
import * as k8s from "@kubernetes/client-node";
import { mariaDBKind, type KindRef } from "../../src/api/index.ts";
import { localEnv } from "../../harness/world/env.ts";
import { asUser, custom } from "../../harness/world/sql.ts";
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
