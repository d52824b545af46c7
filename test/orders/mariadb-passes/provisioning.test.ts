// Whole passes of the MariaDBDatabase order on the fake Kubernetes port, with a fake clock and an
// in-memory credential store: provisioned through seed 002's kinds (a Database, a User and a Grant),
// checked by a login, backed up and delivered; the repair of a lost user, a refused Database, the
// order's claim on the server, and the names of an order of a long name. Decisions, not evidence:
// e2e/mariadb-orders proves the same against the real servers, through the operator process.
import { beforeEach, describe, expect, it } from "vitest";
import {
  mariaDBDatabaseKind,
  secretKind,
  sqlDatabaseKind,
  sqlGrantKind,
  sqlUserKind,
} from "../../../src/api/index.ts";
import { defaultTransport } from "../../../src/mariadb/client.ts";
import { orderHash } from "../../../src/orders/core/naming.ts";
import { reconcileOrder } from "../../../src/orders/core/reconcile.ts";
import { WAITING_FALLBACK_MS } from "../../../src/orders/core/requeue.ts";
import { mariaDBDatabaseOrder } from "../../../src/orders/mariadb/kind.ts";
import { userName } from "../../../src/orders/mariadb/naming.ts";
import { CP_NS, TENANT, b64, checks, clock, deps, events, kube, names, store, unb64 } from "../pass-world.ts";
import {
  DB,
  NAME,
  PREFIX,
  condition,
  converge,
  delivered,
  deliveredData,
  order,
  pass,
  setUp,
  sql,
  status,
  user,
  world,
} from "./fixture.ts";

beforeEach(setUp);

describe("a MariaDBDatabase on the fake port", () => {
  it("is provisioned through a Database, a User and a Grant, checked by a login, backed up and delivered", async () => {
    world();
    expect(await pass()).toEqual({ requeueAfterMs: undefined });
    expect(order()?.metadata?.finalizers).toEqual(["c5c3.io/mariadbdatabase-teardown"]);

    expect(await pass()).toEqual({ requeueAfterMs: WAITING_FALLBACK_MS });
    expect(condition("DatabaseReady")).toMatchObject({ reason: "WaitingForSchema" });
    expect(condition("DatabaseReady")?.message).toBe(
      `waiting for the SQL operator to report database "${DB}" Ready`,
    );
    const database = kube.read(sqlDatabaseKind, CP_NS, `${PREFIX}-db-database`);
    expect(database?.["spec"]).toEqual({
      name: DB,
      mariaDbRef: { name: "mariadb" },
      cleanupPolicy: "Skip",
    });
    expect(database?.metadata?.labels).toEqual({
      "c5c3.io/mariadbdatabase-name": NAME,
      "c5c3.io/mariadbdatabase-namespace": TENANT,
      "c5c3.io/mariadbdatabase-cluster": "",
    });
    await sql();
    expect(await pass()).toEqual({ requeueAfterMs: WAITING_FALLBACK_MS });
    expect(condition("DatabaseReady")).toMatchObject({ reason: "WaitingForUser" });
    expect(condition("DatabaseReady")?.message).toBe(
      `waiting for the SQL operator to report user "${user(1)}" Ready`,
    );
    expect(names(sqlUserKind)).toEqual([`${PREFIX}-db-user-v1`]);
    expect(kube.read(sqlUserKind, CP_NS, `${PREFIX}-db-user-v1`)?.["spec"]).toEqual({
      name: user(1),
      host: "%",
      passwordSecretKeyRef: { name: `${PREFIX}-db-password-v1`, key: "password" },
      mariaDbRef: { name: "mariadb" },
      cleanupPolicy: "Delete",
    });
    const password = kube.read(secretKind, CP_NS, `${PREFIX}-db-password-v1`);
    expect(password?.metadata?.labels?.["k8s.mariadb.com/watch"]).toBe("");
    await sql();
    await pass();
    expect(kube.read(sqlGrantKind, CP_NS, `${PREFIX}-db-grant-v1`)?.["spec"]).toEqual({
      privileges: ["ALL PRIVILEGES"],
      database: DB,
      table: "*",
      username: user(1),
      host: "%",
      mariaDbRef: { name: "mariadb" },
      cleanupPolicy: "Delete",
    });
    await sql();
    expect(await pass()).toEqual({ requeueAfterMs: 180_000 });
    expect(condition("Ready")).toMatchObject({ status: "True", reason: "AllReady" });
    expect(condition("DatabaseReady")).toMatchObject({
      reason: "DatabaseProvisioned",
      message: `database "${DB}" and user "${user(1)}" exist on the server`,
    });
    expect(checks.map((c) => [c.host, c.port, c.resource, c.username])).toEqual([
      ["mariadb.openstack.svc", 3306, DB, user(1)],
    ]);
    const pw = unb64((password?.["data"] as Record<string, string>)["password"]);
    const connection = `mysql+pymysql://${user(1)}:${pw}@mariadb.openstack.svc:3306/${DB}?charset=utf8`;
    expect(deliveredData()).toEqual({
      connection,
      host: "mariadb.openstack.svc",
      port: "3306",
      database: DB,
      username: user(1),
      password: pw,
      "database.conf": `[database]\nconnection = ${connection}\n`,
    });
    expect([...store.paths.values()][0]?.data).toEqual(deliveredData());
    expect(delivered()?.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: "MariaDBDatabase",
      controller: true,
    });
    expect(status()).toMatchObject({
      database: DB,
      username: user(1),
      host: "mariadb.openstack.svc",
      port: 3306,
      passwordGeneration: 1,
      secretName: `${NAME}-credentials`,
      secretKeys: ["connection", "host", "port", "database", "username", "password", "database.conf"],
    });
    expect([...store.paths.keys()]).toEqual([`openstack/mariadb/${CP_NS}/${PREFIX}-db/credentials`]);
    // No password in a condition or an event.
    const said = JSON.stringify([status()["conditions"], events]);
    expect(said).not.toContain(pw);
    expect(said).not.toContain("admin-pw");
  });

  it("names the database spec.databaseName when given", async () => {
    world({ databaseName: "nova_api" });
    await converge();
    expect(status()["database"]).toBe("nova_api");
    expect(deliveredData()["connection"]).toContain(":3306/nova_api?charset=utf8");
  });

  it("delivers the server's CA as ca.crt when the server uses TLS, and logs in with it", async () => {
    world({}, { "ca.crt": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n" });
    await converge();
    expect(deliveredData()["ca.crt"]).toContain("BEGIN CERTIFICATE");
    expect(status()["secretKeys"]).toEqual([
      "connection",
      "host",
      "port",
      "database",
      "username",
      "password",
      "database.conf",
      "ca.crt",
    ]);
  });

  it("gives an order delivered without database.conf the key on its next pass: no rotation, no new user", async () => {
    world();
    // The release before database.conf: the same order kind, delivering and backing up the six keys.
    const current = mariaDBDatabaseOrder();
    const before = {
      ...current,
      deliveredKeys: current.deliveredKeys.filter((k) => k !== "database.conf"),
      deliveredData: (input: Parameters<typeof current.deliveredData>[0]) => {
        const { ["database.conf"]: _conf, ...six } = current.deliveredData(input);
        return six;
      },
    };
    for (let i = 0; i < 10 && condition("Ready")?.status !== "True"; i++) {
      await reconcileOrder(before, deps, "", TENANT, NAME);
      await sql();
    }
    expect(Object.keys(deliveredData()).sort()).toEqual([
      "connection",
      "database",
      "host",
      "password",
      "port",
      "username",
    ]);
    const path = `openstack/mariadb/${CP_NS}/${PREFIX}-db/credentials`;
    expect(store.paths.get(path)?.version).toBe(1);
    const old = deliveredData();
    const users = names(sqlUserKind);
    const logins = checks.length;
    const eventsBefore = events.length;

    // The upgraded operator's next pass.
    await pass();
    expect(deliveredData()).toEqual({
      ...old,
      "database.conf": `[database]\nconnection = ${old["connection"]}\n`,
    });
    expect(store.paths.get(path)).toEqual({ version: 2, data: deliveredData() });
    expect(status()).toMatchObject({
      passwordGeneration: 1,
      username: user(1),
      secretKeys: ["connection", "host", "port", "database", "username", "password", "database.conf"],
    });
    expect(condition("Ready")).toMatchObject({ status: "True" });
    expect(condition("DeliveryReady")).toMatchObject({ status: "True", reason: "Delivered" });
    expect(names(sqlUserKind)).toEqual(users);
    expect(checks).toHaveLength(logins);
    expect(events.slice(eventsBefore).map((e) => e.reason)).not.toContain("Rotated");

    // And the pass after writes nothing more.
    const writes = store.calls.write;
    await pass();
    expect(store.calls.write).toBe(writes);
    expect(store.paths.get(path)?.version).toBe(2);
  });

  it("declares its Users REQUIRE X509 when the operator reaches MariaDB over TLS (seed 002)", async () => {
    world();
    const overTls = mariaDBDatabaseOrder({ transport: { ...defaultTransport, tls: true } });
    const userChild = () => kube.read(sqlUserKind, CP_NS, `${PREFIX}-db-user-v1`);
    for (let i = 0; i < 10 && !userChild(); i++) {
      await reconcileOrder(overTls, deps, "", TENANT, NAME);
      await sql();
    }
    expect(userChild()?.["spec"]).toMatchObject({ name: user(1), require: { x509: true } });
  });

  it("replaces a live user whose User or password Secret was lost, and switches to it", async () => {
    world();
    await converge();
    kube.remove(sqlUserKind, CP_NS, `${PREFIX}-db-user-v1`);
    await pass();
    expect(condition("DatabaseReady")).toMatchObject({
      reason: "WaitingForUser",
      message: `the User of the delivered user "${user(1)}" is gone; a new user replaces it; its successor user "${user(2)}" is being created`,
    });
    expect(names(sqlUserKind)).toContain(`${PREFIX}-db-user-v2`);
    await converge();
    expect(deliveredData()["username"]).toBe(user(2));

    const secret = kube.read(secretKind, CP_NS, `${PREFIX}-db-password-v2`);
    kube.put(secretKind, { ...secret, data: { username: b64(user(2)), password: "" } });
    clock.advance(60_000);
    for (let i = 0; i < 6; i++) {
      await pass();
      await sql();
    }
    expect(deliveredData()["username"]).toBe(user(3));
  });

  it("a refused Database reads DatabaseFailed with the SQL operator's message", async () => {
    world();
    await pass();
    await pass();
    const database = kube.all(sqlDatabaseKind)[0];
    kube.put(sqlDatabaseKind, {
      ...database,
      status: {
        conditions: [
          {
            type: "Ready",
            status: "False",
            reason: "ReconcileError",
            message: "Access denied",
            observedGeneration: 1,
          },
        ],
      },
    });
    await pass();
    expect(condition("DatabaseReady")).toMatchObject({
      reason: "DatabaseFailed",
      message: `the SQL operator cannot create database "${DB}": Access denied`,
    });
  });

  it("never shares a database another Database in the namespace declares", async () => {
    world();
    kube.put(sqlDatabaseKind, {
      metadata: { name: "nova-cell0-by-hand", namespace: CP_NS },
      spec: { name: DB, mariaDbRef: { name: "mariadb" } },
    });
    await pass();
    const result = await pass();
    expect(result.error).toBeDefined();
    expect(condition("DatabaseReady")).toMatchObject({ reason: "DatabaseError" });
    expect(condition("DatabaseReady")?.message).toContain(`Database ${CP_NS}/nova-cell0-by-hand`);
    expect(kube.all(sqlDatabaseKind)).toHaveLength(1);
  });
});

describe("the order's claim on the server (fake port)", () => {
  const CLAIM = "c5c3.io/sql-claim";
  const ADOPT = "c5c3.io/sql-adopt-unmarked";
  const annotations = (kind: typeof sqlUserKind, name: string) =>
    kube.read(kind, CP_NS, name)?.metadata?.annotations ?? {};

  it("claims its Database, User and Grant as MariaDBDatabase <cluster>/<namespace>/<name>, adopting nothing", async () => {
    world();
    await converge();
    const claim = `MariaDBDatabase /${TENANT}/${NAME}`;
    for (const [kind, name] of [
      [sqlDatabaseKind, `${PREFIX}-db-database`],
      [sqlUserKind, `${PREFIX}-db-user-v1`],
      [sqlGrantKind, `${PREFIX}-db-grant-v1`],
    ] as const) {
      expect(annotations(kind, name)[CLAIM]).toBe(claim);
      expect(annotations(kind, name)[ADOPT]).toBeUndefined();
    }
  });

  it("lets a Database and User made before claims take over their unmarked schema and account, and keeps the status' database", async () => {
    world();
    await converge();
    // The children as an operator before claims left them: no claim, the database named <name with '_'>.
    const legacyDb = "nova_cell0";
    const database = kube.read(sqlDatabaseKind, CP_NS, `${PREFIX}-db-database`);
    const { [CLAIM]: _c, ...rest } = database?.metadata?.annotations ?? {};
    kube.put(sqlDatabaseKind, {
      ...database,
      metadata: { ...database?.metadata, annotations: rest },
      spec: { ...(database?.["spec"] as object), name: legacyDb },
    });
    const userObject = kube.read(sqlUserKind, CP_NS, `${PREFIX}-db-user-v1`);
    const { [CLAIM]: _u, ...userRest } = userObject?.metadata?.annotations ?? {};
    kube.put(sqlUserKind, { ...userObject, metadata: { ...userObject?.metadata, annotations: userRest } });
    const raw = order();
    kube.put(mariaDBDatabaseKind, { ...raw, status: { ...(raw?.status as object), database: legacyDb } });
    await pass();
    await sql();
    await pass();
    expect(kube.read(sqlDatabaseKind, CP_NS, `${PREFIX}-db-database`)?.["spec"]).toMatchObject({
      name: legacyDb,
    });
    expect(annotations(sqlDatabaseKind, `${PREFIX}-db-database`)).toMatchObject({ [ADOPT]: "true" });
    expect(annotations(sqlUserKind, `${PREFIX}-db-user-v1`)).toMatchObject({ [ADOPT]: "true" });
    expect(annotations(sqlGrantKind, `${PREFIX}-db-grant-v1`)[ADOPT]).toBeUndefined();
    expect(status()["database"]).toBe(legacyDb);
    // The leave stays while the child names the same thing.
    await pass();
    expect(annotations(sqlDatabaseKind, `${PREFIX}-db-database`)).toMatchObject({ [ADOPT]: "true" });
  });
});

describe("an order of a name over 53 characters (fake port)", () => {
  const LONG = `nova-${"x".repeat(50)}-api`;
  const key = { cluster: "", namespace: TENANT, name: LONG };
  const childPrefix = `${LONG}-${orderHash(key)}-db-`;
  const passLong = () => reconcileOrder(mariaDBDatabaseOrder(), deps, "", TENANT, LONG);
  const longData = () =>
    Object.fromEntries(
      Object.entries(
        (kube.read(secretKind, TENANT, `${LONG}-credentials`)?.["data"] ?? {}) as Record<string, string>,
      ).map(([k, v]) => [k, unb64(v)]),
    );
  async function convergeLong() {
    for (let i = 0; i < 10; i++) {
      await passLong();
      await sql();
    }
  }
  function longWorld() {
    world();
    const raw = order();
    kube.remove(mariaDBDatabaseKind, TENANT, NAME);
    kube.put(mariaDBDatabaseKind, { metadata: { name: LONG, namespace: TENANT }, spec: raw?.["spec"] });
  }

  it("gets accounts <first 29 characters>-<32 hex>-v<N>", async () => {
    longWorld();
    await convergeLong();
    expect(longData()["username"]).toBe(userName(key, 1));
    expect(userName(key, 1)).toMatch(new RegExp(`^${LONG.slice(0, 29)}-[0-9a-f]{32}-v1$`));
    expect(kube.read(sqlUserKind, CP_NS, `${childPrefix}user-v1`)?.["spec"]).toMatchObject({
      name: userName(key, 1),
    });
  });

  it("keeps the accounts of the scheme before issue 31 when its Users already hold them, through a rotation", async () => {
    longWorld();
    await convergeLong();
    // As the operator before issue 31 left it: the account <name cut to 53>-<8 hex>-v1, no claims.
    const old = (n: number) => userName(key, n, true);
    expect(old(1)).toBe(`${LONG.slice(0, 53)}-${orderHash(key)}-v1`);
    const rewrite = (kind: typeof sqlUserKind, name: string, spec: Record<string, unknown>) => {
      const object = kube.read(kind, CP_NS, name);
      const { ["c5c3.io/sql-claim"]: _claim, ...annotations } = object?.metadata?.annotations ?? {};
      kube.put(kind, {
        ...object,
        metadata: { ...object?.metadata, annotations },
        spec: { ...(object?.["spec"] as object), ...spec },
      });
    };
    rewrite(sqlUserKind, `${childPrefix}user-v1`, { name: old(1) });
    rewrite(sqlGrantKind, `${childPrefix}grant-v1`, { username: old(1) });
    for (const [namespace, name] of [
      [CP_NS, `${childPrefix}password-v1`],
      [TENANT, `${LONG}-credentials`],
    ] as const) {
      const secret = kube.read(secretKind, namespace, name);
      const data = secret?.["data"] as Record<string, string>;
      kube.put(secretKind, { ...secret, data: { ...data, username: b64(old(1)) } });
    }
    await sql();
    await convergeLong();
    expect(longData()["username"]).toBe(old(1));
    expect(kube.read(sqlUserKind, CP_NS, `${childPrefix}user-v1`)?.["spec"]).toMatchObject({ name: old(1) });
    expect(kube.read(sqlUserKind, CP_NS, `${childPrefix}user-v1`)?.metadata?.annotations).toMatchObject({
      "c5c3.io/sql-claim": `MariaDBDatabase /${TENANT}/${LONG}`,
      "c5c3.io/sql-adopt-unmarked": "true",
    });
    const raw = kube.read(mariaDBDatabaseKind, TENANT, LONG);
    kube.put(mariaDBDatabaseKind, {
      ...raw,
      spec: { ...(raw?.["spec"] as object), passwordGeneration: 2 },
    });
    await convergeLong();
    expect(longData()["username"]).toBe(old(2));
    expect(kube.read(sqlUserKind, CP_NS, `${childPrefix}user-v2`)?.["spec"]).toMatchObject({ name: old(2) });
    expect(
      kube.read(sqlUserKind, CP_NS, `${childPrefix}user-v2`)?.metadata?.annotations?.[
        "c5c3.io/sql-adopt-unmarked"
      ],
    ).toBeUndefined();

    // The status lost during generation 1's grace period: the first pass of a fresh process reads the
    // delivered Secret by the scheme its listing found, so generation 1 is kept, not pruned.
    const rotated = kube.read(mariaDBDatabaseKind, TENANT, LONG);
    expect(rotated?.["status"]).toMatchObject({ passwordGeneration: 2, previousPasswordGeneration: 1 });
    kube.put(mariaDBDatabaseKind, { ...rotated, status: undefined });
    await passLong();
    expect(
      kube.read(sqlUserKind, CP_NS, `${childPrefix}user-v1`)?.metadata?.deletionTimestamp,
    ).toBeUndefined();
    expect(kube.read(sqlUserKind, CP_NS, `${childPrefix}user-v1`)).toBeDefined();
    expect(kube.read(mariaDBDatabaseKind, TENANT, LONG)?.["status"]).toMatchObject({
      passwordGeneration: 2,
      previousPasswordGeneration: 1,
      username: old(2),
    });
  });
});
