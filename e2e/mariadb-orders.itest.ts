// MariaDBDatabase orders with the operator as its users run it (`node src/main.ts --mariadb-orders
// --sql-controller`): the built-in SQL controller serves the Database, User and Grant children on the
// local MariaDB, the backup goes to the local OpenBao. Two orders side by side on the management
// cluster: one under Delete is provisioned, logged in with through its delivered Secret, repaired,
// frozen, rotated twice by raises of passwordGeneration under a prober that reads the Secret before every
// login (both users log in during the grace period, only the new one after it) and deleted, which drops
// its database; one under Retain rotates on its schedule (1m, grace 20s), keeps its data when deleted
// and reattaches when re-created. A third order lives on the registered target cluster. No password
// reaches the operator's logs, the orders' status or the events.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installCrds } from "../harness/world/managed-bus.ts";
import { controlPlaneKind, mariaDBDatabaseKind } from "../src/api/index.ts";
import { backupPath } from "../src/orders/core/naming.ts";
import { defaultDatabaseName, MARIADB_NAMING, userName } from "../src/orders/mariadb/naming.ts";
import {
  installRelease,
  serviceAccountToken,
  tokenKubeconfig,
  uninstallRelease,
  type Release,
} from "../harness/charts/release.ts";
import { adminServer, asUser, custom, tearDownNamespace } from "../harness/world/sql.ts";
import { localEnv } from "../harness/world/env.ts";
import { eventually, freshNamespace, isApiError, testCluster } from "../harness/world/kube.ts";
import { LoginProber } from "../harness/probes/login-prober.ts";
import {
  apply,
  conditionOf,
  group,
  logIn,
  managedMariaDB,
  mariadbOrderArgs,
  readyOf,
  refused,
  sqlLogin,
  type Order,
} from "./support/mariadb-world.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import { openBaoRead } from "../harness/world/order-env.ts";
import { createTargetWorld, destroyTargetWorld, type TargetWorld } from "../harness/world/target-cluster.ts";

const env = localEnv();
const cluster = testCluster("management");
const server = adminServer();
const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
const ssa = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.ServerSideApply);
/** The local server's administrator, as the ControlPlanes' credentials Secrets name it. */
const adminCredentials = {
  username: env.MARIADB_ADMIN_USERNAME,
  password: env.MARIADB_ADMIN_PASSWORD,
  host: env.MARIADB_HOST,
  port: String(env.MARIADB_PORT),
};

let cpNs = "";
let tenantNs = "";
let target: TargetWorld | undefined;
let release: Release | undefined;
let kubeconfig: { path: string; remove: () => void } | undefined;
let operator: OperatorProcess | undefined;
/** Every password the test saw; none may appear in the logs, the status or the events. */
const secrets = new Set<string>();
const databases: string[] = [];

async function readOrder(name: string, where = { api: custom, namespace: "" }): Promise<Order | undefined> {
  try {
    return (await where.api.getNamespacedCustomObject({
      ...group(mariaDBDatabaseKind),
      namespace: where.namespace || tenantNs,
      name,
    })) as Order;
  } catch (error) {
    if (isApiError(error, 404)) return undefined;
    throw error;
  }
}

async function deleteOrder(name: string): Promise<void> {
  await custom.deleteNamespacedCustomObject({ ...group(mariaDBDatabaseKind), namespace: tenantNs, name });
  await eventually(`${name} gone`, async () => ((await readOrder(name)) ? undefined : true), 90_000);
}

/** Who holds privileges on the database `name`. */
async function privilegesOn(name: string): Promise<{ grantee: string }[]> {
  return server.select(
    "SELECT DISTINCT GRANTEE AS grantee FROM information_schema.SCHEMA_PRIVILEGES WHERE TABLE_SCHEMA = ?",
    [name.replace(/[\\_%]/g, (c) => `\\${c}`)],
  );
}

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

async function delivered(
  name: string,
  where = { core: cluster.core, namespace: "" },
): Promise<Record<string, string>> {
  const secret = await where.core.readNamespacedSecret({
    namespace: where.namespace || tenantNs,
    name: `${name}-credentials`,
  });
  const data = Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
  );
  if (data["password"]) secrets.add(data["password"]);
  return data;
}

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
  await managedMariaDB(cluster.core, custom, cpNs, adminCredentials);
  secrets.add(env.MARIADB_ADMIN_PASSWORD);
  await assign(true);
  // A registered target cluster (deploy/target-cluster-access with its CRDs) and its ControlPlane, which
  // also declares the managed MariaDB and publishes the server's address.
  target = await createTargetWorld("mdbt");
  await managedMariaDB(cluster.core, custom, target.cpNs, adminCredentials);
  await custom.patchNamespacedCustomObject(
    {
      ...group(controlPlaneKind),
      namespace: target.cpNs,
      name: "cp",
      body: {
        apiVersion: controlPlaneKind.apiVersion,
        kind: controlPlaneKind.kind,
        metadata: { name: "cp", namespace: target.cpNs },
        spec: {
          infrastructure: {
            database: { clusterRef: { name: "mariadb" }, secretRef: { name: "mariadb-admin" } },
            // Another name of the local server than the credentials Secret's, so that a delivery of the
            // published endpoint shows.
            publishedDatabaseEndpoint: `localhost:${env.MARIADB_PORT}`,
          },
        },
      },
      fieldManager: "e2e-database",
      force: true,
    },
    ssa,
  );
  // The operator runs with nothing but a token of the chart's ServiceAccount: the chart's RBAC for
  // settings.mariadb-orders and settings.sql-controller is all it needs.
  release = await installRelease(cluster, "vb-mdb", {
    "settings.openbao-address": env.BAO_ADDR,
    "settings.sql-controller": "true",
    "settings.mariadb-orders": "true",
    "settings.mariadb-host": env.MARIADB_HOST,
  });
  kubeconfig = tokenKubeconfig(await serviceAccountToken(cluster, release));
  operator = await OperatorProcess.start({
    kubeconfig: kubeconfig.path,
    clusterSecretNamespace: target.secretNs,
    args: mariadbOrderArgs(env.MARIADB_ADMIN_USERNAME, "2s"),
    env: { VHOST_BROKER_MARIADB_PASSWORD: env.MARIADB_ADMIN_PASSWORD },
  });
}, 5 * 60_000);

/** The ControlPlane assigns the tenant namespace (true) or nothing (false: its orders are frozen). */
async function assign(assigned: boolean) {
  await apply(controlPlaneKind, cpNs, "cp", {
    spec: {
      namespaceAssignments: assigned ? [{ namespace: tenantNs }] : [],
      infrastructure: { database: { clusterRef: { name: "mariadb" }, secretRef: { name: "mariadb-admin" } } },
    },
  });
}

afterAll(async () => {
  try {
    await destroyTargetWorld(target);
  } finally {
    if (target) await tearDownNamespace(target.cpNs);
  }
  await operator?.stop();
  kubeconfig?.remove();
  await uninstallRelease(cluster, release).catch(() => undefined);
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
  const EDGE = "e2e-edge";
  const THIEF = "e2e-thief";
  const OWNER = "e2e-owner";
  const SQUAT = "e2e-squat";
  const rotation = { interval: "0s", gracePeriod: "20s" };
  /** KEEP's first delivered credentials, refused once its scheduled rotation's grace period is over. */
  let keepFirst: Record<string, string> = {};
  /** The databases derived from the orders' identities: <name with '_'>_<32 hex>. */
  const dbOf = (name: string) => defaultDatabaseName({ cluster: "", namespace: tenantNs, name });

  it("provisions both orders and delivers credentials a MariaDB client logs in with", async () => {
    databases.push(dbOf(DROP), dbOf(KEEP));
    await orderSpec(DROP, { deletionPolicy: "Delete", rotation });
    await orderSpec(KEEP, { deletionPolicy: "Retain", rotation: { interval: "1m", gracePeriod: "20s" } });
    const drop = await waitReady(DROP);
    await waitReady(KEEP);
    expect(drop.status).toMatchObject({
      database: dbOf(DROP),
      username: userName({ cluster: "", namespace: tenantNs, name: DROP }, 1),
    });

    const data = await delivered(DROP);
    expect(Object.keys(data).sort()).toEqual([
      "connection",
      "database",
      "database.conf",
      "host",
      "password",
      "port",
      "username",
    ]);
    expect(data["connection"]).toBe(
      `mysql+pymysql://${data["username"]}:${data["password"]}@${env.MARIADB_HOST}:${env.MARIADB_PORT}/${dbOf(DROP)}?charset=utf8`,
    );
    expect(data["database.conf"]).toBe(`[database]\nconnection = ${data["connection"]}\n`);
    await logIn(data, "CREATE TABLE t (v VARCHAR(32))");
    await logIn(data, "INSERT INTO t VALUES ('kept')");
    const keep = await delivered(KEEP);
    keepFirst = keep;
    await logIn(keep, "CREATE TABLE t (v VARCHAR(32))");
    await logIn(keep, "INSERT INTO t VALUES ('kept')");
    // Each order's user reaches its own database only.
    await expect(
      asUser(data["username"] ?? "", data["password"] ?? "", "SELECT 1", { database: dbOf(KEEP) }),
    ).rejects.toThrow();

    const backup = await openBaoRead(
      backupPath(MARIADB_NAMING, { cluster: "", namespace: tenantNs, name: DROP }, cpNs),
    );
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

  it("freezes the orders of a withdrawn namespace: nothing is repaired until it is assigned again", async () => {
    const before = await delivered(DROP);
    await assign(false);
    try {
      await eventually("DROP frozen", async () =>
        (await readOrder(DROP))?.status?.conditions?.find((c) => c.type === "DatabaseReady")?.reason ===
        "NamespaceNotAssigned"
          ? true
          : undefined,
      );
      await cluster.core.patchNamespacedSecret(
        { namespace: tenantNs, name: `${DROP}-credentials`, body: { stringData: { password: "edited" } } },
        merge,
      );
      // The edit is an event the operator sees; a frozen order leaves it.
      await new Promise((r) => setTimeout(r, 3_000));
      expect((await delivered(DROP))["password"]).toBe("edited");
    } finally {
      await assign(true);
    }
    await eventually("the Secret repaired once assigned again", async () =>
      (await delivered(DROP))["password"] === before["password"] ? true : undefined,
    );
  });

  it("rotates twice by raises under a prober: both users log in during the grace period, then only the new one", async () => {
    const key = { cluster: "", namespace: tenantNs, name: DROP };
    const prober = new LoginProber({
      core: cluster.core,
      namespace: tenantNs,
      order: DROP,
      login: sqlLogin,
    }).start();
    try {
      for (const generation of [2, 3]) {
        const old = await delivered(DROP);
        await orderSpec(DROP, { deletionPolicy: "Delete", rotation, passwordGeneration: generation });
        const rotated = await waitReady(DROP, generation);
        expect(rotated.status?.username).toBe(userName(key, generation));
        const next = await delivered(DROP);
        expect(next["username"]).toBe(userName(key, generation));
        expect(await logIn(next, "SELECT v FROM t")).toEqual([{ v: "kept" }]);
        // Within the grace period the superseded user still logs in.
        const graceLeft = Date.parse(rotated.status?.previousPasswordDeleteAt ?? "") - Date.now();
        if (graceLeft > 3_000) expect(await logIn(old)).toBeDefined();
        await eventually(
          "the superseded user refused",
          async () => ((await refused(old)) ? true : undefined),
          90_000,
        );
        expect(await accountExists(userName(key, generation - 1))).toBe(false);
        await eventually("the grace period over", async () =>
          (await readOrder(DROP))?.status?.previousPasswordDeleteAt === undefined ? true : undefined,
        );
      }
    } finally {
      const counts = await prober.stop();
      console.log(prober.summary());
      expect(counts.authFailures).toBe(0);
      expect(counts.otherFailures).toBe(0);
      expect(counts.usernamesSeen).toEqual([1, 2, 3].map((n) => userName(key, n)));
    }
  });

  it("rotates on its schedule (1m, grace 20s): the old user is refused after the grace period", async () => {
    const key = { cluster: "", namespace: tenantNs, name: KEEP };
    const rotated = await eventually(
      "KEEP rotated on schedule",
      async () => {
        const o = await readOrder(KEEP);
        return (o?.status?.passwordGeneration ?? 0) >= 2 && readyOf(o)?.status === "True" ? o : undefined;
      },
      120_000,
    );
    const live = rotated.status?.passwordGeneration ?? 2;
    const next = await delivered(KEEP);
    expect(next["username"]).toBe(userName(key, live));
    expect(await logIn(next, "SELECT v FROM t")).toEqual([{ v: "kept" }]);
    await eventually(
      "the superseded account dropped",
      async () => ((await accountExists(userName(key, live - 1))) ? undefined : true),
      60_000,
    );
    expect(await refused(keepFirst)).toBe(true);
  });

  it("serves an order on the registered target cluster with the published endpoint", async () => {
    const world = target as TargetWorld;
    const api = world.target.config.makeApiClient(k8s.CustomObjectsApi);
    const namespace = world.assigned[0] ?? "";
    await apply(
      mariaDBDatabaseKind,
      namespace,
      EDGE,
      { spec: { controlPlaneRef: { name: "cp", namespace: world.cpNs }, rotation } },
      api,
    );
    await eventually(
      "the target order Ready",
      async () => (readyOf(await readOrder(EDGE, { api, namespace }))?.status === "True" ? true : undefined),
      90_000,
    );
    const data = await delivered(EDGE, { core: world.target.core, namespace });
    const edgeDb = defaultDatabaseName({ cluster: world.clusterName, namespace, name: EDGE });
    databases.push(edgeDb);
    expect(data).toMatchObject({ host: "localhost", port: String(env.MARIADB_PORT), database: edgeDb });
    expect(data["username"]).toBe(userName({ cluster: world.clusterName, namespace, name: EDGE }, 1));
    expect(await logIn(data)).toBeDefined();
    await api.deleteNamespacedCustomObject({ ...group(mariaDBDatabaseKind), namespace, name: EDGE });
    await eventually(
      "the target order gone",
      async () => ((await readOrder(EDGE, { api, namespace })) ? undefined : true),
      60_000,
    );
    expect(await accountExists(data["username"] ?? "")).toBe(false);
    expect(await databaseExists(edgeDb)).toBe(true);
  });

  it("Delete drops the database; Retain keeps it with its data, reattaches a re-created order, and a late Delete drops it", async () => {
    const keepBefore = await delivered(KEEP);
    for (const name of [DROP, KEEP])
      await custom.deleteNamespacedCustomObject({ ...group(mariaDBDatabaseKind), namespace: tenantNs, name });
    await eventually(
      "both orders gone",
      async () => (!(await readOrder(DROP)) && !(await readOrder(KEEP)) ? true : undefined),
      90_000,
    );
    expect(await databaseExists(dbOf(DROP))).toBe(false);
    expect(await databaseExists(dbOf(KEEP))).toBe(true);
    expect(await accountExists(keepBefore["username"] ?? "")).toBe(false);
    const key = { cluster: "", namespace: tenantNs, name: KEEP };
    expect(await openBaoRead(backupPath(MARIADB_NAMING, key, cpNs))).toBeUndefined();

    await orderSpec(KEEP, { deletionPolicy: "Retain", rotation });
    await waitReady(KEEP);
    expect(await logIn(await delivered(KEEP), "SELECT v FROM t")).toEqual([{ v: "kept" }]);

    // A policy changed to Delete right before the deletion still drops the database.
    await orderSpec(KEEP, { deletionPolicy: "Delete", rotation });
    await custom.deleteNamespacedCustomObject({
      ...group(mariaDBDatabaseKind),
      namespace: tenantNs,
      name: KEEP,
    });
    await eventually("KEEP gone", async () => ((await readOrder(KEEP)) ? undefined : true), 90_000);
    expect(await databaseExists(dbOf(KEEP))).toBe(false);
  });

  it("refuses a database it did not create, and one another ControlPlane's order made: never granted on or dropped", async () => {
    const suffix = Math.random().toString(36).slice(2, 8);
    const foreign = `e2e_foreign_${suffix}`;
    const shared = `e2e_shared_${suffix}`;
    databases.push(foreign, shared);
    await server.run(`CREATE DATABASE \`${foreign}\``);
    await server.run(`CREATE TABLE \`${foreign}\`.data (v INT)`);
    await orderSpec(THIEF, { deletionPolicy: "Delete", databaseName: foreign, rotation });
    const refusedDb = await eventually(
      "THIEF's database refused",
      async () => {
        const c = conditionOf(await readOrder(THIEF), "DatabaseReady");
        return c?.reason === "DatabaseFailed" ? c : undefined;
      },
      90_000,
    );
    expect(refusedDb.message).toContain(
      `database ${foreign} exists on the server, that this controller did not create, not for MariaDBDatabase /${tenantNs}/${THIEF}`,
    );
    expect(readyOf(await readOrder(THIEF))?.status).toBe("False");
    await deleteOrder(THIEF);
    expect(await databaseExists(foreign)).toBe(true);
    expect(await privilegesOn(foreign)).toEqual([]);

    // Another ControlPlane's namespace holds no Database the order leg could see: the server's mark
    // is what refuses the second order of the same database.
    await orderSpec(OWNER, { deletionPolicy: "Retain", databaseName: shared, rotation });
    await waitReady(OWNER);
    const owner = await delivered(OWNER);
    await logIn(owner, "CREATE TABLE t (v INT)");
    const world = target as TargetWorld;
    const api = world.target.config.makeApiClient(k8s.CustomObjectsApi);
    const namespace = world.assigned[0] ?? "";
    const spec = { controlPlaneRef: { name: "cp", namespace: world.cpNs }, databaseName: shared, rotation };
    await apply(mariaDBDatabaseKind, namespace, THIEF, { spec: { ...spec, deletionPolicy: "Delete" } }, api);
    const taken = await eventually(
      "the target order's database refused",
      async () => {
        const c = conditionOf(await readOrder(THIEF, { api, namespace }), "DatabaseReady");
        return c?.reason === "DatabaseFailed" ? c : undefined;
      },
      90_000,
    );
    expect(taken.message).toContain(`created for MariaDBDatabase /${tenantNs}/${OWNER}`);
    await api.deleteNamespacedCustomObject({ ...group(mariaDBDatabaseKind), namespace, name: THIEF });
    await eventually(
      "the target order gone",
      async () => ((await readOrder(THIEF, { api, namespace })) ? undefined : true),
      60_000,
    );
    expect(await databaseExists(shared)).toBe(true);
    expect(await logIn(owner, "SELECT v FROM t")).toEqual([]);
    expect((await privilegesOn(shared)).map((r) => r.grantee)).toEqual([`'${owner["username"]}'@'%'`]);
    await deleteOrder(OWNER);
  });

  it("never alters an account of its name that it did not create", async () => {
    const account = userName({ cluster: "", namespace: tenantNs, name: SQUAT }, 1);
    const theirs = `theirs-${Math.random().toString(36).slice(2, 8)}`;
    secrets.add(theirs);
    databases.push(dbOf(SQUAT));
    await server.run(`CREATE USER '${account}'@'%' IDENTIFIED BY '${theirs}'`);
    try {
      await orderSpec(SQUAT, { deletionPolicy: "Delete", rotation });
      const refusal = await eventually(
        "SQUAT's account refused",
        async () =>
          (await readOrder(SQUAT))?.status?.conditions?.find((c) =>
            c.message.includes(`account '${account}'@'%' exists on the server`),
          ),
        90_000,
      );
      expect(refusal.message).toContain(
        `which this controller did not create for MariaDBDatabase /${tenantNs}/${SQUAT}`,
      );
      expect(readyOf(await readOrder(SQUAT))?.status).toBe("False");
      await expect(asUser(account, theirs, "SELECT 1")).resolves.toBeDefined();
      expect(await privilegesOn(dbOf(SQUAT))).toEqual([]);
      await deleteOrder(SQUAT);
      expect(await accountExists(account)).toBe(true);
      await expect(asUser(account, theirs, "SELECT 1")).resolves.toBeDefined();
    } finally {
      await server.run(`DROP USER IF EXISTS '${account}'@'%'`);
    }
  });

  it("writes no password to the operator's log, the orders' status or the events", async () => {
    const events = await cluster.core.listNamespacedEvent({ namespace: tenantNs });
    const orders = await custom.listNamespacedCustomObject({
      ...group(mariaDBDatabaseKind),
      namespace: tenantNs,
    });
    const said = [operator?.logs() ?? "", JSON.stringify(events.items), JSON.stringify(orders)].join("\n");
    expect(secrets.size).toBeGreaterThan(5);
    for (const secret of secrets) expect(said).not.toContain(secret);
  });
});
