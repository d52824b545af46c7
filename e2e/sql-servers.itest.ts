// The SQL controller's servers, through the operator process: two ControlPlanes declare two MariaDBs,
// one the real local server (as an administrator account made for this file), one a hung listener (it
// accepts TCP and never answers). The real server's Databases get Ready while the hung server's wait in
// their own lane, told so by a MariaDBSlow Event; a ref no ControlPlane declares (and no mariadb-host)
// waits with a message saying so, and nothing is written anywhere for it. Then the administrator's
// password is rotated on the server and in its Secret, its sessions are killed, and a new Database still
// gets Ready: the Secret is read again and a new pool opened, without a restart. Last, drift: with
// many objects on the real server, the administrator's SELECTs over two periods (MariaDB's
// USER_STATISTICS) are the catalogue's few, not one lookup per object, and a database and an account
// dropped behind the controller's back are back within the period.
import { randomBytes } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controlPlaneKind, sqlDatabaseKind, sqlUserKind } from "../src/api/index.ts";
import { accountName, quoteIdentifier } from "../src/mariadb/sql-text.ts";
import {
  adminServer,
  cluster,
  createAdminAccount,
  createResource,
  custom,
  dropFromServer,
  env,
  getResource,
  ready,
  setAccountPassword,
  setUpNamespace,
  tearDownNamespace,
  writePasswordSecret,
} from "../harness/world/sql.ts";
import { eventually } from "../harness/world/kube.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";

const HUNG = 6;
const REAL = 4;
const CATALOGUED = 20;
const PERIOD_MS = 4_000;
const tag = randomBytes(3).toString("hex");
const admin = `vb_sqlsrv_${tag}`;
const passwords = [`pw1-${randomBytes(9).toString("hex")}`, `pw2-${randomBytes(9).toString("hex")}`];
const server = adminServer();
const databases: string[] = [];
let namespace = "";
let hung: Server | undefined;
const held = new Set<Socket>();
let operator: OperatorProcess | undefined;
const account = `vb_srvacct_${tag}`;
/** The server's userstat before this file turned it on, restored after. */
let userstat: number | undefined;

/** The SELECTs the controller's administrator has sent since userstat was on. */
async function adminSelects(): Promise<number> {
  const [row] = await server.select<{ selects: number }>(
    "SELECT SELECT_COMMANDS AS selects FROM information_schema.USER_STATISTICS WHERE USER = ?",
    [admin],
  );
  return Number(row?.selects ?? 0);
}

async function accountOnServer(name: string): Promise<boolean> {
  return (await server.select("SELECT 1 FROM mysql.user WHERE User = ? AND Host = '%'", [name])).length > 0;
}

async function credentialsSecret(name: string, data: Record<string, string>): Promise<void> {
  const body = { metadata: { name, namespace }, stringData: data };
  try {
    await cluster.core.createNamespacedSecret({ namespace, body });
  } catch {
    await cluster.core.replaceNamespacedSecret({ namespace, name, body });
  }
}

async function controlPlane(name: string, mariadb: string, secret: string): Promise<void> {
  await custom.createNamespacedCustomObject({
    group: controlPlaneKind.group,
    version: controlPlaneKind.version,
    plural: controlPlaneKind.plural,
    namespace,
    body: {
      apiVersion: controlPlaneKind.apiVersion,
      kind: controlPlaneKind.kind,
      metadata: { name, namespace },
      spec: { infrastructure: { database: { clusterRef: { name: mariadb }, secretRef: { name: secret } } } },
    },
  });
}

async function createDatabase(name: string, mariadb: string): Promise<string> {
  const dbName = `srv_${tag}_${name.replaceAll("-", "_")}`;
  databases.push(dbName);
  await createResource(sqlDatabaseKind, namespace, name, { name: dbName, mariaDbRef: { name: mariadb } });
  return dbName;
}

async function readyCount(prefix: string): Promise<number> {
  const list = (await custom.listNamespacedCustomObject({
    group: sqlDatabaseKind.group,
    version: sqlDatabaseKind.version,
    plural: sqlDatabaseKind.plural,
    namespace,
  })) as {
    items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[];
  };
  return list.items.filter(
    (d) =>
      d.metadata.name.startsWith(prefix) &&
      d.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
  ).length;
}

async function databaseOnServer(name: string): Promise<boolean> {
  const rows = await server.select("SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", [name]);
  return rows.length > 0;
}

beforeAll(async () => {
  namespace = await setUpNamespace("sqlsrv");
  await createAdminAccount(server, admin, passwords[0]!);
  hung = createServer((socket) => {
    held.add(socket);
    socket.on("close", () => held.delete(socket));
    socket.on("error", () => undefined);
    socket.resume();
  });
  await new Promise<void>((resolve) => hung!.listen(0, "127.0.0.1", resolve));
  const hungPort = (hung.address() as { port: number }).port;
  await credentialsSecret("db-real", {
    host: env.MARIADB_HOST,
    port: String(env.MARIADB_PORT),
    username: admin,
    password: passwords[0]!,
  });
  await credentialsSecret("db-hung", {
    host: "127.0.0.1",
    port: String(hungPort),
    username: "nobody",
    password: "never-sent",
  });
  await controlPlane("cp-real", "mariadb-real", "db-real");
  await controlPlane("cp-hung", "mariadb-hung", "db-hung");
  operator = await OperatorProcess.start({
    args: [
      "--topology-controller=false",
      "--sql-controller",
      // Only this file's refs: the process serves every namespace, and other files' objects are theirs.
      `--sql-mariadb-refs=names:${namespace}/mariadb-real,${namespace}/mariadb-hung,${namespace}/mariadb-none`,
      "--max-concurrent-reconciles=2",
      "--backend-request-timeout=10s",
      `--sql-verification-period=${PERIOD_MS / 1000}s`,
      "--connection-wait-interval=1s",
      "--transient-requeue-interval=1s",
    ],
  });
}, 120_000);

afterAll(async () => {
  await operator?.stop();
  await tearDownNamespace(namespace);
  await dropFromServer(server, { databases, accounts: [admin, account] });
  if (userstat !== undefined) await server.run(`SET GLOBAL userstat = ${userstat}`).catch(() => undefined);
  await server.close();
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => hung?.close(resolve));
}, 120_000);

describe("the SQL controller's servers, operator process", () => {
  it("makes the real server's Databases Ready while the hung one holds its own lane, and names it", async () => {
    for (let i = 0; i < HUNG; i++) await createDatabase(`hung-${i}`, "mariadb-hung");
    // The hung server's first passes have started and wait for its handshake.
    await new Promise((r) => setTimeout(r, 2_000));
    const created = performance.now();
    const real: string[] = [];
    for (let i = 0; i < REAL; i++) real.push(await createDatabase(`real-${i}`, "mariadb-real"));
    await eventually(
      `${REAL} real Databases Ready`,
      async () => ((await readyCount("real-")) === REAL ? true : undefined),
      60_000,
      100,
    );
    // Behind the hung server's passes (each waits out its 10 s connect deadline) they would take longer.
    expect(performance.now() - created).toBeLessThan(8_000);
    for (const name of real) expect(await databaseOnServer(name)).toBe(true);
    expect(await readyCount("hung-")).toBe(0);

    const events = await eventually(
      "a MariaDBSlow Event",
      async () => {
        const list = await cluster.config.makeApiClient(k8s.EventsV1Api).listNamespacedEvent({ namespace });
        const slow = list.items.filter((e) => e.reason === "MariaDBSlow");
        return slow.length > 0 ? slow : undefined;
      },
      30_000,
      500,
    );
    for (const event of events) {
      expect(event.type).toBe("Warning");
      expect(event.regarding?.name).toMatch(/^hung-/);
      expect(event.note).toContain(`MariaDB ${namespace}/mariadb-hung is slow`);
    }
  }, 120_000);

  it("leaves a ref no ControlPlane declares waiting, saying so, and writes nowhere", async () => {
    const dbName = await createDatabase("none", "mariadb-none");
    const condition = await eventually("Ready False naming the undeclared MariaDB", async () => {
      const c = ready(await getResource(sqlDatabaseKind, namespace, "none"));
      return c?.status === "False" ? c : undefined;
    });
    expect(condition.message).toContain(
      `no ControlPlane of namespace ${namespace} declares MariaDB ${namespace}/mariadb-none`,
    );
    expect(await databaseOnServer(dbName)).toBe(false);
  });

  it("reads the administrator's Secret again after a rotation: a new Database still gets Ready", async () => {
    await setAccountPassword(server, admin, passwords[1]!);
    await credentialsSecret("db-real", {
      host: env.MARIADB_HOST,
      port: String(env.MARIADB_PORT),
      username: admin,
      password: passwords[1]!,
    });
    // The pool's sessions logged in with the old password: they go, so that only a new login serves.
    const sessions = await server.select<{ id: number }>(
      "SELECT ID AS id FROM information_schema.PROCESSLIST WHERE USER = ?",
      [admin],
    );
    for (const { id } of sessions) await server.run(`KILL ${Number(id)}`).catch(() => undefined);
    const dbName = await createDatabase("after-rotation", "mariadb-real");
    await eventually(
      "the Database made after the rotation Ready",
      async () =>
        ready(await getResource(sqlDatabaseKind, namespace, "after-rotation"))?.status === "True"
          ? true
          : undefined,
      30_000,
    );
    expect(await databaseOnServer(dbName)).toBe(true);
    // The administrator's sessions now are new ones, logged in with the new password.
    const now = await server.select<{ id: number }>(
      "SELECT ID AS id FROM information_schema.PROCESSLIST WHERE USER = ?",
      [admin],
    );
    const killed = new Set(sessions.map((s) => Number(s.id)));
    expect(now.filter((s) => killed.has(Number(s.id)))).toEqual([]);
    const logs = operator?.logs() ?? "";
    for (const password of passwords) expect(logs).not.toContain(password);
  }, 60_000);

  it("verifies by catalogue: a few SELECTs a period for many objects, and drift repaired within the period", async () => {
    const names: string[] = [];
    for (let i = 0; i < CATALOGUED; i++) names.push(await createDatabase(`cat-${i}`, "mariadb-real"));
    await writePasswordSecret(namespace, "acct-password", `acct-${tag}`);
    await createResource(sqlUserKind, namespace, "acct", {
      name: account,
      mariaDbRef: { name: "mariadb-real" },
      passwordSecretKeyRef: { name: "acct-password", key: "password" },
    });
    await eventually(
      "every catalogued object Ready",
      async () =>
        (await readyCount("cat-")) === CATALOGUED &&
        ready(await getResource(sqlUserKind, namespace, "acct"))?.status === "True"
          ? true
          : undefined,
      60_000,
    );
    // Every object applied once: from now on each verification is one of the period's.
    await new Promise((r) => setTimeout(r, PERIOD_MS));
    const [was] = await server.select<{ v: number }>("SELECT @@global.userstat AS v", []);
    userstat = Number(was?.v ?? 0);
    await server.run("SET GLOBAL userstat = 1");
    const before = await adminSelects();
    await new Promise((r) => setTimeout(r, 2 * PERIOD_MS));
    const selects = (await adminSelects()) - before;
    // Over two periods the server's 26 objects would cost 52 lookups or more one by one; the
    // catalogue is five SELECTs a period (three catalogues at most in the window).
    expect(selects).toBeGreaterThan(0);
    expect(selects).toBeLessThanOrEqual(15);

    const dropped = names[7]!;
    await server.run(`DROP DATABASE ${quoteIdentifier(dropped)}`);
    await server.run(`DROP USER ${accountName(account, "%")}`);
    const droppedAt = performance.now();
    await eventually(
      "the dropped database and account back",
      async () => ((await databaseOnServer(dropped)) && (await accountOnServer(account)) ? true : undefined),
      3 * PERIOD_MS,
      100,
    );
    expect(performance.now() - droppedAt).toBeLessThan(PERIOD_MS + 2_000);
  }, 120_000);
});
