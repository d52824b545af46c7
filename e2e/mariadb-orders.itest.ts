// MariaDBDatabase orders with the operator as its users run it (`node src/main.ts --mariadb-orders
// --sql-controller`): the built-in SQL controller serves the Database, User and Grant children on the
// local MariaDB, the backup goes to the local OpenBao. Two orders side by side: one under Delete is
// provisioned, logged in with through its delivered Secret, repaired, rotated by a raise of
// passwordGeneration (both users log in during the grace period, only the new one after it) and deleted,
// which drops its database; one under Retain keeps its data when deleted and reattaches when re-created.
// No password reaches the operator's logs, the orders' status or the events.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installCrds } from "../scripts/demo/managed-bus.ts";
import { controlPlaneKind, mariaDBDatabaseKind, mariaDBKind, type KindRef } from "../src/api/index.ts";
import { backupPath, userName } from "../src/orders/mariadb/naming.ts";
import { adminServer, asUser, custom, tearDownNamespace } from "../test/sql/support.ts";
import { localEnv } from "../test/support/env.ts";
import { eventually, freshNamespace, isApiError, testCluster } from "../test/support/kube.ts";
import { OperatorProcess } from "./support/operator-process.ts";
import { openBaoRead } from "./support/order-env.ts";

const env = localEnv();
const cluster = testCluster("management");
const server = adminServer();
const ssa = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.ServerSideApply);
const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
const group = (kind: KindRef) => ({ group: kind.group, version: kind.version, plural: kind.plural });

let cpNs = "";
let tenantNs = "";
let operator: OperatorProcess | undefined;
/** Every password the test saw; none may appear in the logs, the status or the events. */
const secrets = new Set<string>();
const databases: string[] = [];

async function apply(kind: KindRef, namespace: string, name: string, body: Record<string, unknown>) {
  await custom.patchNamespacedCustomObject(
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

interface Order {
  metadata: { name: string; generation: number };
  status?: {
    conditions?: { type: string; status: string; reason: string; message: string }[];
    passwordGeneration?: number;
    previousPasswordDeleteAt?: string;
    username?: string;
    database?: string;
  };
}

async function readOrder(name: string): Promise<Order | undefined> {
  try {
    return (await custom.getNamespacedCustomObject({
      ...group(mariaDBDatabaseKind),
      namespace: tenantNs,
      name,
    })) as Order;
  } catch (error) {
    if (isApiError(error, 404)) return undefined;
    throw error;
  }
}

const readyOf = (o: Order | undefined) => o?.status?.conditions?.find((c) => c.type === "Ready");

async function orderSpec(name: string, spec: Record<string, unknown>) {
  await apply(mariaDBDatabaseKind, tenantNs, name, {
    spec: { controlPlaneRef: { name: "cp", namespace: cpNs }, ...spec },
  });
}

async function waitReady(name: string, generation = 1): Promise<Order> {
  return eventually(
    `${name} Ready with generation ${generation}`,
    async () => {
      const o = await readOrder(name);
      return readyOf(o)?.status === "True" && o?.status?.passwordGeneration === generation ? o : undefined;
    },
    90_000,
  );
}

async function delivered(name: string): Promise<Record<string, string>> {
  const secret = await cluster.core.readNamespacedSecret({
    namespace: tenantNs,
    name: `${name}-credentials`,
  });
  const data = Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
  );
  if (data["password"]) secrets.add(data["password"]);
  return data;
}

/** A login with the delivered Secret's keys, as a consumer would make it; true or the server's error. */
async function logIn(data: Record<string, string>, sql = "SELECT 1"): Promise<unknown[]> {
  return asUser(data["username"] ?? "", data["password"] ?? "", sql, {
    host: data["host"],
    port: Number(data["port"]),
    database: data["database"],
  });
}

const refused = (data: Record<string, string>) =>
  logIn(data).then(
    () => false,
    (error: { code?: string }) => error.code === "ER_ACCESS_DENIED_ERROR",
  );

async function databaseExists(name: string): Promise<boolean> {
  const rows = await server.select("SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", [name]);
  return rows.length > 0;
}

async function accountExists(name: string): Promise<boolean> {
  return (await server.select("SELECT 1 FROM mysql.user WHERE User = ?", [name])).length > 0;
}

beforeAll(async () => {
  await installCrds(cluster.config);
  cpNs = await freshNamespace(cluster, "mdb-cp");
  tenantNs = await freshNamespace(cluster, "mdb-tenant");
  await cluster.core.createNamespacedSecret({
    namespace: cpNs,
    body: {
      metadata: { name: "mariadb-admin" },
      stringData: {
        username: env.MARIADB_ADMIN_USERNAME,
        password: env.MARIADB_ADMIN_PASSWORD,
        host: env.MARIADB_HOST,
        port: String(env.MARIADB_PORT),
      },
    },
  });
  secrets.add(env.MARIADB_ADMIN_PASSWORD);
  await apply(mariaDBKind, cpNs, "mariadb", { spec: {} });
  await custom.patchNamespacedCustomObjectStatus(
    {
      ...group(mariaDBKind),
      namespace: cpNs,
      name: "mariadb",
      body: {
        status: { conditions: [{ type: "Ready", status: "True", reason: "Ready", message: "local" }] },
      },
    },
    merge,
  );
  await apply(controlPlaneKind, cpNs, "cp", {
    spec: {
      namespaceAssignments: [{ namespace: tenantNs }],
      infrastructure: { database: { clusterRef: { name: "mariadb" }, secretRef: { name: "mariadb-admin" } } },
    },
  });
  operator = await OperatorProcess.start({
    args: [
      "--topology-controller=false",
      "--mariadb-orders",
      "--sql-controller",
      `--mariadb-host=${env.MARIADB_HOST}`,
      `--mariadb-port=${env.MARIADB_PORT}`,
      `--mariadb-username=${env.MARIADB_ADMIN_USERNAME}`,
      "--sql-verification-period=3s",
      "--connection-wait-interval=1s",
      "--transient-requeue-interval=2s",
    ],
    env: { VHOST_BROKER_MARIADB_PASSWORD: env.MARIADB_ADMIN_PASSWORD },
  });
});

afterAll(async () => {
  await operator?.stop();
  for (const kind of [mariaDBDatabaseKind, controlPlaneKind]) {
    for (const namespace of [tenantNs, cpNs]) {
      const list = (await custom
        .listNamespacedCustomObject({ ...group(kind), namespace })
        .catch(() => ({ items: [] }))) as { items: { metadata: { name: string } }[] };
      for (const item of list.items) {
        const where = { ...group(kind), namespace, name: item.metadata.name };
        await custom
          .patchNamespacedCustomObject({ ...where, body: { metadata: { finalizers: null } } }, merge)
          .catch(() => undefined);
      }
    }
  }
  if (tenantNs) await cluster.core.deleteNamespace({ name: tenantNs }).catch(() => undefined);
  if (cpNs) await tearDownNamespace(cpNs);
  for (const name of databases)
    await server.run(`DROP DATABASE IF EXISTS \`${name}\``).catch(() => undefined);
  await server.close();
});

describe("MariaDBDatabase orders, operator process, real MariaDB", () => {
  const DROP = "e2e-drop";
  const KEEP = "e2e-keep";

  it("provisions both orders and delivers credentials a MariaDB client logs in with", async () => {
    databases.push("e2e_drop", "e2e_keep");
    await orderSpec(DROP, { deletionPolicy: "Delete", rotation: { interval: "0s", gracePeriod: "20s" } });
    await orderSpec(KEEP, { deletionPolicy: "Retain", rotation: { interval: "0s", gracePeriod: "20s" } });
    const drop = await waitReady(DROP);
    await waitReady(KEEP);
    expect(drop.status).toMatchObject({
      database: "e2e_drop",
      username: expect.stringMatching(/^e2e-drop-[0-9a-f]{8}-v1$/),
    });

    const data = await delivered(DROP);
    expect(Object.keys(data).sort()).toEqual([
      "connection",
      "database",
      "host",
      "password",
      "port",
      "username",
    ]);
    expect(data["connection"]).toBe(
      `mysql+pymysql://${data["username"]}:${data["password"]}@${env.MARIADB_HOST}:${env.MARIADB_PORT}/e2e_drop?charset=utf8`,
    );
    await logIn(data, "CREATE TABLE t (v VARCHAR(32))");
    await logIn(data, "INSERT INTO t VALUES ('kept')");
    const keep = await delivered(KEEP);
    await logIn(keep, "CREATE TABLE t (v VARCHAR(32))");
    await logIn(keep, "INSERT INTO t VALUES ('kept')");
    // Each order's user reaches its own database only.
    await expect(
      asUser(data["username"] ?? "", data["password"] ?? "", "SELECT 1", { database: "e2e_keep" }),
    ).rejects.toThrow();

    const key = { cluster: "", namespace: tenantNs, name: DROP };
    const backup = await openBaoRead(backupPath(key, cpNs));
    expect(backup?.["password"]).toBe(data["password"]);
  });

  it("repairs an edited delivered Secret", async () => {
    const before = await delivered(DROP);
    await cluster.core.patchNamespacedSecret(
      { namespace: tenantNs, name: `${DROP}-credentials`, body: { stringData: { password: "edited" } } },
      merge,
    );
    await eventually("the Secret repaired", async () =>
      (await delivered(DROP))["password"] === before["password"] ? true : undefined,
    );
  });

  it("rotates on a raise of passwordGeneration: both users log in during the grace period, then only the new one", async () => {
    const old = await delivered(DROP);
    await orderSpec(DROP, {
      deletionPolicy: "Delete",
      rotation: { interval: "0s", gracePeriod: "20s" },
      passwordGeneration: 2,
    });
    const rotated = await waitReady(DROP, 2);
    const key = { cluster: "", namespace: tenantNs, name: DROP };
    expect(rotated.status?.username).toBe(userName(key, 2));
    const next = await delivered(DROP);
    expect(next["username"]).toBe(userName(key, 2));
    expect(await logIn(next, "SELECT v FROM t")).toEqual([{ v: "kept" }]);
    expect(rotated.status?.previousPasswordDeleteAt).toBeDefined();
    // Within the grace period the superseded user still logs in.
    if (Date.parse(rotated.status?.previousPasswordDeleteAt ?? "") - Date.now() > 3_000)
      expect(await logIn(old)).toBeDefined();
    await eventually(
      "the superseded user refused",
      async () => ((await refused(old)) ? true : undefined),
      90_000,
    );
    expect(await accountExists(userName(key, 1))).toBe(false);
    expect(await logIn(next)).toBeDefined();
  });

  it("Delete drops the database; Retain keeps it with its data and reattaches a re-created order", async () => {
    const keepBefore = await delivered(KEEP);
    for (const name of [DROP, KEEP])
      await custom.deleteNamespacedCustomObject({ ...group(mariaDBDatabaseKind), namespace: tenantNs, name });
    await eventually(
      "both orders gone",
      async () => (!(await readOrder(DROP)) && !(await readOrder(KEEP)) ? true : undefined),
      90_000,
    );
    expect(await databaseExists("e2e_drop")).toBe(false);
    expect(await databaseExists("e2e_keep")).toBe(true);
    expect(await accountExists(keepBefore["username"] ?? "")).toBe(false);
    const key = { cluster: "", namespace: tenantNs, name: KEEP };
    expect(await openBaoRead(backupPath(key, cpNs))).toBeUndefined();

    await orderSpec(KEEP, { deletionPolicy: "Delete", rotation: { interval: "0s", gracePeriod: "20s" } });
    await waitReady(KEEP);
    expect(await logIn(await delivered(KEEP), "SELECT v FROM t")).toEqual([{ v: "kept" }]);
  });

  it("writes no password to the operator's log, the orders' status or the events", async () => {
    const events = await cluster.core.listNamespacedEvent({ namespace: tenantNs });
    const orders = await custom.listNamespacedCustomObject({
      ...group(mariaDBDatabaseKind),
      namespace: tenantNs,
    });
    const said = [operator?.logs() ?? "", JSON.stringify(events.items), JSON.stringify(orders)].join("\n");
    expect(secrets.size).toBeGreaterThan(3);
    for (const secret of secrets) expect(said).not.toContain(secret);
  });
});
