// The MariaDBDatabase order in the whole-pass tests' world (../pass-world.ts): its ControlPlane, MariaDB
// and order, one pass of it on the management cluster or a target cluster, the SQL controller's part
// between passes, the names the order derives, and what the tests read of the order and its delivered
// Secret.
import {
  controlPlaneKind,
  mariaDBDatabaseKind,
  mariaDBKind,
  secretKind,
  sqlDatabaseKind,
  sqlGrantKind,
  sqlUserKind,
} from "../../../src/api/index.ts";
import { orderHash } from "../../../src/orders/core/naming.ts";
import { reconcileOrder } from "../../../src/orders/core/reconcile.ts";
import { mariaDBDatabaseOrder } from "../../../src/orders/mariadb/kind.ts";
import { defaultDatabaseName } from "../../../src/orders/mariadb/naming.ts";
import { TransientError } from "../../../src/runtime/base/errors.ts";
import { CP_NS, TENANT, b64, deps, freshWorld, kube, putOrder, unb64 } from "../pass-world.ts";

export const NAME = "nova-cell0";
export const PREFIX = `${NAME}-${orderHash({ cluster: "", namespace: TENANT, name: NAME })}`;
export const user = (n: number) => `${PREFIX}-v${n}`;
/** The database derived from the order's identity: <name with '_'>_<32 hex>. */
export const DB = defaultDatabaseName({ cluster: "", namespace: TENANT, name: NAME });

/** A fresh world (before each test); the server's refusal of a successor's login names the user. */
export const setUp = () =>
  freshWorld((login) => `the server refuses a login of user "${login.username}" (test)`);

export function world(spec: Record<string, unknown> = {}, credentials: Record<string, string> = {}) {
  kube.put(controlPlaneKind, {
    metadata: { name: "cp", namespace: CP_NS },
    spec: {
      namespaceAssignments: [
        { namespace: TENANT },
        { namespace: TENANT, targetClusterRef: { name: "edge" } },
      ],
      infrastructure: { database: { clusterRef: { name: "mariadb" }, secretRef: { name: "mariadb-admin" } } },
    },
  });
  kube.put(mariaDBKind, {
    metadata: { name: "mariadb", namespace: CP_NS },
    spec: {},
    status: { conditions: [{ type: "Ready", status: "True" }] },
  });
  kube.put(secretKind, {
    metadata: { name: "mariadb-admin", namespace: CP_NS },
    data: Object.fromEntries(
      Object.entries({
        username: "root",
        password: "admin-pw",
        host: "mariadb.openstack.svc",
        port: "3306",
        ...credentials,
      }).map(([k, v]) => [k, b64(v)]),
    ),
  });
  putOrder(mariaDBDatabaseKind, NAME, spec);
}

export async function pass(
  cluster = "",
  home = kube,
): Promise<{ requeueAfterMs?: number | undefined; error?: string }> {
  try {
    return await reconcileOrder(mariaDBDatabaseOrder(), { ...deps, home }, cluster, TENANT, NAME);
  } catch (error) {
    if (!(error instanceof TransientError)) throw error;
    return { error: error.message };
  }
}

/**
 * The SQL controller's part: every Database, User and Grant reported Ready for its generation, with its
 * cleanup finalizer under cleanupPolicy Delete; one being deleted is dropped and let go.
 */
export async function sql(): Promise<void> {
  for (const kind of [sqlDatabaseKind, sqlUserKind, sqlGrantKind]) {
    for (const object of kube.all(kind)) {
      const finalizer = `mariadb.osh.openstack.org/${kind.kind.toLowerCase()}-cleanup`;
      if (object.metadata?.deletionTimestamp) {
        await kube.removeFinalizer(kind, object, finalizer);
        continue;
      }
      const observedGeneration = object.metadata?.generation ?? 1;
      const cleanup = (object["spec"] as { cleanupPolicy?: string } | undefined)?.cleanupPolicy;
      kube.put(kind, {
        ...object,
        metadata: { ...object.metadata, finalizers: cleanup === "Delete" ? [finalizer] : [] },
        status: {
          conditions: [
            { type: "Ready", status: "True", reason: "Reconciled", message: "ok", observedGeneration },
          ],
        },
      });
    }
  }
}

export const order = (home = kube) => home.read(mariaDBDatabaseKind, TENANT, NAME);
export const condition = (type: string, home = kube) =>
  (
    order(home)?.status as {
      conditions?: { type: string; status: string; reason: string; message: string }[];
    }
  )?.conditions?.find((c) => c.type === type);
export const status = (home = kube) => (order(home)?.status ?? {}) as Record<string, unknown>;
export const delivered = (home = kube) => home.read(secretKind, TENANT, `${NAME}-credentials`);
export const deliveredData = (home = kube) =>
  Object.fromEntries(
    Object.entries((delivered(home)?.["data"] ?? {}) as Record<string, string>).map(([k, v]) => [
      k,
      unb64(v),
    ]),
  );

export async function converge(cluster = "", home = kube): Promise<{ requeueAfterMs?: number | undefined }> {
  for (let i = 0; i < 10; i++) {
    const result = await pass(cluster, home);
    await sql();
    if (condition("Ready", home)?.status === "True") return result;
  }
  throw new Error(`did not converge: ${JSON.stringify(status(home)["conditions"])}`);
}
