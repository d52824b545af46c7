// Whole passes of the MariaDBDatabase order on the fake Kubernetes port, with a fake clock and an
// in-memory credential store: the gates, the children through seed 002's kinds, rotation, delivery and
// teardown, built on the same order core as RabbitMQVhost. Decisions, not evidence: e2e/mariadb-orders
// proves the same against the real servers, through the operator process.
import { beforeEach, describe, expect, it } from "vitest";
import {
  controlPlaneKind,
  mariaDBDatabaseKind,
  mariaDBKind,
  rabbitMQVhostKind,
  secretKind,
  sqlDatabaseKind,
  sqlGrantKind,
  sqlUserKind,
} from "../../src/api/index.ts";
import { defaultTransport } from "../../src/mariadb/client.ts";
import type { OrderDeps, OrderEvent } from "../../src/orders/core/deps.ts";
import type { SuccessorLogin } from "../../src/orders/core/kind.ts";
import { orderHash } from "../../src/orders/core/naming.ts";
import { reconcileOrder } from "../../src/orders/core/reconcile.ts";
import { SuccessorBackoff, WAITING_FALLBACK_MS } from "../../src/orders/core/requeue.ts";
import { mariaDBDatabaseOrder } from "../../src/orders/mariadb/kind.ts";
import { defaultDatabaseName, userName } from "../../src/orders/mariadb/naming.ts";
import { TransientError } from "../../src/runtime/base/errors.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { FakeKube } from "../support/fake-kube.ts";
import { MemoryStore } from "../support/memory-store.ts";

const TENANT = "tenant-a";
const CP_NS = "openstack";
const NAME = "nova-cell0";
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
const unb64 = (s: string | undefined) => Buffer.from(s ?? "", "base64").toString("utf8");
const PREFIX = `${NAME}-${orderHash({ cluster: "", namespace: TENANT, name: NAME })}`;
const user = (n: number) => `${PREFIX}-v${n}`;
/** The database derived from the order's identity: <name with '_'>_<32 hex>. */
const DB = defaultDatabaseName({ cluster: "", namespace: TENANT, name: NAME });

let clock: FakeClock;
let kube: FakeKube;
let store: MemoryStore;
let events: OrderEvent[];
let checks: SuccessorLogin[];
let accept: boolean;
let deps: OrderDeps;

function world(spec: Record<string, unknown> = {}, credentials: Record<string, string> = {}) {
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
  kube.put(mariaDBDatabaseKind, {
    metadata: { name: NAME, namespace: TENANT },
    spec: {
      controlPlaneRef: { name: "cp", namespace: CP_NS },
      passwordGeneration: 1,
      rotation: { interval: "3m", gracePeriod: "1m" },
      deletionPolicy: "Retain",
      ...spec,
    },
  });
}

async function pass(
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
async function sql(): Promise<void> {
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

const order = (home = kube) => home.read(mariaDBDatabaseKind, TENANT, NAME);
const condition = (type: string, home = kube) =>
  (
    order(home)?.status as {
      conditions?: { type: string; status: string; reason: string; message: string }[];
    }
  )?.conditions?.find((c) => c.type === type);
const status = (home = kube) => (order(home)?.status ?? {}) as Record<string, unknown>;
const delivered = (home = kube) => home.read(secretKind, TENANT, `${NAME}-credentials`);
const deliveredData = (home = kube) =>
  Object.fromEntries(
    Object.entries((delivered(home)?.["data"] ?? {}) as Record<string, string>).map(([k, v]) => [
      k,
      unb64(v),
    ]),
  );
const names = (kind: typeof sqlUserKind) =>
  kube
    .all(kind)
    .map((o) => o.metadata?.name ?? "")
    .sort();

async function converge(cluster = "", home = kube): Promise<{ requeueAfterMs?: number | undefined }> {
  for (let i = 0; i < 10; i++) {
    const result = await pass(cluster, home);
    await sql();
    if (condition("Ready", home)?.status === "True") return result;
  }
  throw new Error(`did not converge: ${JSON.stringify(status(home)["conditions"])}`);
}

beforeEach(() => {
  clock = new FakeClock(Date.parse("2030-01-01T00:00:00Z"));
  kube = new FakeKube({ now: () => new Date(clock.now()) });
  store = new MemoryStore();
  events = [];
  checks = [];
  accept = true;
  deps = {
    management: kube,
    home: kube,
    store,
    clock,
    log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    events: { emit: (_target, event) => void events.push(event) },
    settings: { brokerCheckTimeoutMs: 1_000, transientCapMs: 30_000, sweepHoldMs: 60_000 },
    backoff: new SuccessorBackoff(),
    connections: async () => ({ known: true, count: 0 }),
    successorCheck: async (login) => {
      checks.push(login);
      return accept
        ? { accepted: true }
        : { accepted: false, reason: `the server refuses a login of user "${login.username}" (test)` };
    },
  };
});

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
    expect(deliveredData()).toEqual({
      connection: `mysql+pymysql://${user(1)}:${pw}@mariadb.openstack.svc:3306/${DB}?charset=utf8`,
      host: "mariadb.openstack.svc",
      port: "3306",
      database: DB,
      username: user(1),
      password: pw,
    });
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
      secretKeys: ["connection", "host", "port", "database", "username", "password"],
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
      "ca.crt",
    ]);
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

  it("rotates on schedule, keeps the old user for the grace period, then sweeps its User, Grant and Secret", async () => {
    world();
    await converge();
    clock.advance(180_000);
    await pass();
    expect(names(sqlUserKind)).toEqual([`${PREFIX}-db-user-v1`, `${PREFIX}-db-user-v2`]);
    expect(deliveredData()["username"]).toBe(user(1));
    await sql();
    await pass();
    await sql();
    expect(await pass()).toEqual({ requeueAfterMs: 60_000 });
    expect(status()).toMatchObject({ passwordGeneration: 2, previousPasswordGeneration: 1 });
    expect(deliveredData()["username"]).toBe(user(2));
    expect(events.map((e) => e.reason)).toContain("Rotated");
    clock.advance(60_000);
    await pass();
    // The sweep deletes the old User and Grant; the SQL controller drops the account and lets them go.
    expect(kube.read(sqlUserKind, CP_NS, `${PREFIX}-db-user-v1`)?.metadata?.deletionTimestamp).toBeDefined();
    await sql();
    expect(names(sqlUserKind)).toEqual([`${PREFIX}-db-user-v2`]);
    expect(names(sqlGrantKind)).toEqual([`${PREFIX}-db-grant-v2`]);
    await pass();
    expect(status()["previousPasswordGeneration"]).toBeUndefined();
    expect(kube.all(secretKind).filter((s) => s.metadata?.name?.includes("password-v1"))).toEqual([]);
  });

  it("holds the sweep while the server lists sessions of the superseded account", async () => {
    world();
    await converge();
    let sessions = 1;
    const asked: string[] = [];
    deps.connections = async (username) => {
      asked.push(username);
      return { known: true, count: sessions };
    };
    clock.advance(180_000);
    await pass();
    await sql();
    await pass();
    await sql();
    await pass();
    expect(asked).toEqual([]);
    clock.advance(60_000);
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(asked).toEqual([user(1)]);
    expect(
      kube.read(sqlUserKind, CP_NS, `${PREFIX}-db-user-v1`)?.metadata?.deletionTimestamp,
    ).toBeUndefined();
    expect(condition("DatabaseReady")?.message).toContain(
      `the superseded user "${user(1)}" is kept past its grace period while 1 connection still uses it`,
    );
    sessions = 0;
    clock.advance(10_000);
    await pass();
    expect(kube.read(sqlUserKind, CP_NS, `${PREFIX}-db-user-v1`)?.metadata?.deletionTimestamp).toBeDefined();
  });

  it("asks the server once per sweep for the strays of its naming scheme that no User declares", async () => {
    world();
    await converge();
    const asked: { stray: (username: string) => boolean; order: { name: string } }[] = [];
    const kind = {
      ...mariaDBDatabaseOrder(),
      removeStrayAccounts: async (
        ...[, , , stray, , key]: Parameters<
          NonNullable<ReturnType<typeof mariaDBDatabaseOrder>["removeStrayAccounts"]>
        >
      ) => {
        asked.push({ stray, order: key });
        return { removed: [] };
      },
    };
    const kindPass = () => reconcileOrder(kind, deps, "", TENANT, NAME);
    clock.advance(180_000);
    for (let i = 0; i < 3; i++) {
      await kindPass();
      await sql();
    }
    expect(status()).toMatchObject({ passwordGeneration: 2, previousPasswordGeneration: 1 });
    expect(asked).toEqual([]);
    clock.advance(60_000);
    await kindPass();
    expect(kube.read(sqlUserKind, CP_NS, `${PREFIX}-db-user-v1`)?.metadata?.deletionTimestamp).toBeDefined();
    // The sweep completes once v1's User is gone: then the server is asked, once.
    await sql();
    await kindPass();
    expect(asked).toHaveLength(1);
    expect(asked[0]?.order.name).toBe(NAME);
    // v1 and v3 have no User (a stray of either is dropped); v2 is live; another order's name is never one.
    const stray = asked[0]!.stray;
    expect([1, 2, 3].map((n) => stray(user(n)))).toEqual([true, false, true]);
    expect(stray(`${NAME}-00000000-v3`)).toBe(false);
    await kindPass();
    expect(asked).toHaveLength(1);
  });

  it("keeps the delivered user while the server refuses the successor's login, and switches once it accepts", async () => {
    world();
    await converge();
    accept = false;
    clock.advance(180_000);
    for (let i = 0; i < 3; i++) {
      await pass();
      await sql();
    }
    expect(deliveredData()["username"]).toBe(user(1));
    expect(condition("DatabaseReady")).toMatchObject({ status: "True", reason: "DatabaseProvisioned" });
    expect(condition("DatabaseReady")?.message).toContain(
      `its successor user "${user(2)}" is not switched to yet: the server refuses a login of user "${user(2)}" (test)`,
    );
    accept = true;
    await pass();
    expect(deliveredData()["username"]).toBe(user(2));
  });

  it("raised passwordGeneration rotates at once", async () => {
    world();
    await converge();
    const raw = order();
    kube.put(mariaDBDatabaseKind, { ...raw, spec: { ...(raw?.["spec"] as object), passwordGeneration: 3 } });
    for (let i = 0; i < 4; i++) {
      await pass();
      await sql();
    }
    expect(status()["passwordGeneration"]).toBe(3);
    expect(deliveredData()["username"]).toBe(user(3));
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
  });
});

describe("the MariaDB gates on the fake port", () => {
  it("a ControlPlane without spec.infrastructure.database refuses the order: DatabaseNotDeclared", async () => {
    world();
    const cp = kube.read(controlPlaneKind, CP_NS, "cp");
    kube.put(controlPlaneKind, { ...cp, spec: { namespaceAssignments: [{ namespace: TENANT }] } });
    await pass();
    await pass();
    for (const type of ["DatabaseReady", "DeliveryReady"])
      expect(condition(type)).toMatchObject({
        reason: "DatabaseNotDeclared",
        message: `ControlPlane ${CP_NS}/cp declares no spec.infrastructure.database; a database is ordered on a managed MariaDB only`,
      });
  });

  it("WaitingForDatabaseCredentials until the MariaDB and a complete credentials Secret exist, every 10 s", async () => {
    world({}, { port: "" });
    kube.remove(mariaDBKind, CP_NS, "mariadb");
    await pass();
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(condition("DatabaseReady")).toMatchObject({
      reason: "WaitingForDatabaseCredentials",
      message: `waiting for MariaDB ${CP_NS}/mariadb to exist`,
    });
    kube.put(mariaDBKind, { metadata: { name: "mariadb", namespace: CP_NS }, spec: {} });
    await pass();
    expect(condition("DeliveryReady")).toMatchObject({
      reason: "WaitingForDatabaseCredentials",
      message: `the credentials Secret ${CP_NS}/mariadb-admin lacks "port"; waiting for it to be complete`,
    });
    kube.remove(secretKind, CP_NS, "mariadb-admin");
    await pass();
    expect(condition("DatabaseReady")?.message).toBe(
      `waiting for the credentials Secret ${CP_NS}/mariadb-admin of MariaDB ${CP_NS}/mariadb`,
    );
  });

  it("WaitingForDatabase until the MariaDB reports Ready", async () => {
    world();
    kube.put(mariaDBKind, { metadata: { name: "mariadb", namespace: CP_NS }, spec: {}, status: {} });
    await pass();
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(condition("DatabaseReady")).toMatchObject({
      reason: "WaitingForDatabase",
      message: `waiting for MariaDB ${CP_NS}/mariadb to report Ready`,
    });
  });

  it("SqlOperatorNotInstalled looks again after 10 minutes", async () => {
    world();
    kube.notServed(sqlDatabaseKind);
    await pass();
    expect(await pass()).toEqual({ requeueAfterMs: 600_000 });
    expect(condition("DatabaseReady")?.reason).toBe("SqlOperatorNotInstalled");
  });

  for (const owner of ["nobody", "a RabbitMQVhost"] as const) {
    it(`a Secret of the delivered name owned by ${owner} is refused: DeliveryRefused`, async () => {
      world();
      kube.put(secretKind, {
        metadata: {
          name: `${NAME}-credentials`,
          namespace: TENANT,
          ...(owner === "nobody"
            ? {}
            : {
                ownerReferences: [
                  {
                    apiVersion: rabbitMQVhostKind.apiVersion,
                    kind: "RabbitMQVhost",
                    name: NAME,
                    uid: "u",
                    controller: true,
                  },
                ],
              }),
        },
        data: { a: b64("b") },
      });
      const result = await converge().catch(() => pass());
      expect(condition("DeliveryReady")?.reason).toBe("DeliveryRefused");
      expect(result.requeueAfterMs).toBe(60_000);
      expect(deliveredData()).toEqual({ a: "b" });
    });
  }
});

describe("a MariaDBDatabase on a target cluster", () => {
  it("is provisioned on the management cluster and reads DatabaseNotPublished without a published endpoint", async () => {
    world();
    const edge = new FakeKube({ now: () => new Date(clock.now()) });
    const raw = kube.read(mariaDBDatabaseKind, TENANT, NAME);
    kube.remove(mariaDBDatabaseKind, TENANT, NAME);
    edge.put(mariaDBDatabaseKind, { metadata: { name: NAME, namespace: TENANT }, spec: raw?.["spec"] });
    for (let i = 0; i < 6; i++) {
      await pass("edge", edge);
      await sql();
    }
    expect(condition("DatabaseReady", edge)).toMatchObject({ status: "True", reason: "DatabaseProvisioned" });
    expect(condition("DeliveryReady", edge)).toMatchObject({ reason: "DatabaseNotPublished" });
    expect(delivered(edge)).toBeUndefined();
    expect(kube.all(sqlUserKind)[0]?.metadata?.labels?.["c5c3.io/mariadbdatabase-cluster"]).toBe("edge");

    const cp = kube.read(controlPlaneKind, CP_NS, "cp");
    const spec = cp?.["spec"] as { infrastructure: Record<string, unknown> };
    kube.put(controlPlaneKind, {
      ...cp,
      spec: {
        ...spec,
        infrastructure: { ...spec.infrastructure, publishedDatabaseEndpoint: "db.example.test:13306" },
      },
    });
    await converge("edge", edge);
    expect(deliveredData(edge)).toMatchObject({ host: "db.example.test", port: "13306" });
    const edgeDb = defaultDatabaseName({ cluster: "edge", namespace: TENANT, name: NAME });
    expect(deliveredData(edge)["connection"]).toContain(`@db.example.test:13306/${edgeDb}?charset=utf8`);
  });
});

describe("teardown of a MariaDBDatabase on the fake port", () => {
  for (const [policy, cleanup] of [
    ["Retain", "Skip"],
    ["Delete", "Delete"],
  ] as const) {
    it(`under ${policy} deletes the Database with cleanupPolicy ${cleanup}, every User and Grant, the backup and the Secrets`, async () => {
      world();
      await converge();
      const raw = order();
      kube.put(mariaDBDatabaseKind, {
        ...raw,
        spec: { ...(raw?.["spec"] as object), deletionPolicy: policy },
      });
      let cleanupAtDelete: unknown;
      let finalizersAtDelete: unknown;
      const originalDelete = kube.delete.bind(kube);
      kube.delete = async (kind, ref) => {
        if (kind.kind === "Database")
          finalizersAtDelete = kube.read(sqlDatabaseKind, ref.namespace, ref.name)?.metadata?.finalizers;
        if (kind.kind === "Database")
          cleanupAtDelete = (
            kube.read(sqlDatabaseKind, ref.namespace, ref.name)?.["spec"] as { cleanupPolicy?: string }
          )?.cleanupPolicy;
        return originalDelete(kind, ref);
      };
      await originalDelete(mariaDBDatabaseKind, { namespace: TENANT, name: NAME });
      for (let i = 0; i < 5 && order(); i++) {
        await pass();
        await sql();
      }
      expect(cleanupAtDelete).toBe(cleanup);
      // Under Delete the Database carried the SQL controller's finalizer when it was deleted, so it was dropped.
      expect(finalizersAtDelete).toEqual(
        cleanup === "Delete" ? ["mariadb.osh.openstack.org/database-cleanup"] : [],
      );
      expect(order()).toBeUndefined();
      expect(store.paths.size).toBe(0);
      expect(kube.all(sqlUserKind)).toEqual([]);
      expect(kube.all(sqlGrantKind)).toEqual([]);
      expect(kube.all(sqlDatabaseKind)).toEqual([]);
      expect(kube.all(secretKind).map((s) => s.metadata?.name)).toEqual(["mariadb-admin"]);
    });
  }

  it("under secret-namespaces with a finalizer of an unscoped run: in full but the delivered Secret without its own namespace, nothing without the ControlPlane's", async () => {
    world();
    await converge();
    deps = { ...deps, settings: { ...deps.settings, secretNamespaces: [TENANT] } };
    await kube.delete(mariaDBDatabaseKind, { namespace: TENANT, name: NAME });
    let before = kube.calls.length;
    expect(await pass()).toEqual({});
    expect(order()?.metadata?.finalizers).toEqual(["c5c3.io/mariadbdatabase-teardown"]);
    expect(condition("Ready")).toMatchObject({ status: "False", reason: "SecretsOutOfReach" });
    expect(condition("Ready")?.message).toContain(`namespace "${CP_NS}"`);
    expect(store.paths.size).toBe(1);
    expect(kube.all(sqlUserKind)).not.toEqual([]);
    expect(kube.calls.slice(before).filter((c) => c.kind === "Secret")).toEqual([]);

    // The ControlPlane's namespace listed, the order's own not: the delivered Secret is the garbage
    // collector's, everything else goes.
    deps = { ...deps, settings: { ...deps.settings, secretNamespaces: [CP_NS] } };
    before = kube.calls.length;
    for (let i = 0; i < 5 && order(); i++) {
      await pass();
      await sql();
    }
    expect(order()).toBeUndefined();
    expect(store.paths.size).toBe(0);
    expect([...kube.all(sqlUserKind), ...kube.all(sqlGrantKind), ...kube.all(sqlDatabaseKind)]).toEqual([]);
    expect(delivered()).toBeDefined();
    const asked = kube.calls.slice(before).filter((c) => c.kind === "Secret");
    expect(asked.filter((c) => c.ref.startsWith(`${TENANT}/`))).toEqual([]);
  });

  it("never adopts the User, Grant and password Secret an earlier order of its name made; takes over its Database", async () => {
    world();
    await converge();
    const uid = order()?.metadata?.uid ?? "";
    const mine = (kind: typeof sqlUserKind) =>
      kube
        .all(kind)
        .filter((o) => o.metadata?.namespace === CP_NS && o.metadata?.name?.startsWith(`${NAME}-`));
    for (const kind of [sqlDatabaseKind, sqlUserKind, sqlGrantKind, secretKind]) {
      for (const child of mine(kind)) {
        expect(child.metadata?.annotations?.["c5c3.io/mariadbdatabase-uid"]).toBe(uid);
      }
    }
    const oldPassword = deliveredData()["password"];
    const leftover = { users: names(sqlUserKind), grants: names(sqlGrantKind) };
    // Deleted past its teardown and created again under the same name: a new uid.
    const o = order();
    kube.remove(mariaDBDatabaseKind, TENANT, NAME);
    kube.remove(secretKind, TENANT, `${NAME}-credentials`);
    kube.put(mariaDBDatabaseKind, {
      ...o,
      metadata: { name: NAME, namespace: TENANT, uid: "the-new-order" },
      status: undefined,
    } as never);
    let blocked: { error?: string } = {};
    for (let i = 0; i < 5 && !blocked.error; i++) {
      blocked = await pass();
      await sql();
    }
    expect(blocked.error).toContain(`User ${CP_NS}/${leftover.users[0]}, made by order uid ${uid}`);
    expect(blocked.error).toContain(`Grant ${CP_NS}/${leftover.grants[0]}, made by order uid ${uid}`);
    expect(condition("DatabaseReady")).toMatchObject({ status: "False", reason: "DatabaseError" });
    expect(condition("DatabaseReady")?.message).toContain(`made by order uid ${uid}`);
    await converge();
    expect(names(sqlUserKind)).toEqual(leftover.users);
    for (const kind of [sqlDatabaseKind, sqlUserKind, sqlGrantKind, secretKind]) {
      for (const child of mine(kind)) {
        expect(child.metadata?.annotations?.["c5c3.io/mariadbdatabase-uid"]).toBe("the-new-order");
      }
    }
    expect(mine(sqlDatabaseKind)).toHaveLength(1);
    expect(deliveredData()["password"]).not.toBe(oldPassword);
  });

  it("reattaches to the same Database after a Retain deletion: the same names, a fresh first user", async () => {
    world();
    await converge();
    const before = kube.all(sqlDatabaseKind).map((d) => [d.metadata?.name, d["spec"]]);
    await kube.delete(mariaDBDatabaseKind, { namespace: TENANT, name: NAME });
    await pass();
    world();
    await converge();
    expect(kube.all(sqlDatabaseKind).map((d) => [d.metadata?.name, d["spec"]])).toEqual(before);
    expect(deliveredData()["username"]).toBe(user(1));
  });
});
