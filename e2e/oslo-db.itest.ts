// OpenStack's database libraries consume what the operator delivers, through the operator process
// (`node src/main.ts --mariadb-orders --sql-controller` on the local MariaDB). A Secret reaches the
// service as OpenStack-Helm's `pod.etcSources` mounts it: each key a file in the service's conf.d folder,
// which oslo.config reads with --config-dir (e2e/support/oslo/db.py); oslo.db's engine facade connects
// over PyMySQL, creates a table, writes a row and reads it back, and again in a new process after a
// rotation.
//
// - A seed-002 Connection's Secret holds `database.conf`, an oslo.config snippet: it works as mounted.
//   Its rotation is its User's password Secret: the snippet is rewritten, a new process connects with
//   it, and the old snippet is refused.
// - A MariaDBDatabase order's Secret holds the parts, `connection` and `database.conf`, the snippet of
//   that `connection`: mounted as it is (every key a file, as a Secret volume has them), oslo.config
//   reads database.conf and nothing else there (the other keys end in no .conf). Its rotation is a
//   raised passwordGeneration: within the grace a process still on the old files connects anew; the
//   new Secret written to conf.d again, a new process connects as the new account; after the sweep the
//   old files are refused.
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  mariaDBDatabaseKind,
  sqlConnectionKind,
  sqlDatabaseKind,
  sqlGrantKind,
  sqlUserKind,
} from "../src/api/index.ts";
import { userName } from "../src/orders/mariadb/naming.ts";
import {
  adminServer,
  createResource,
  custom,
  dropFromServer,
  getResource,
  ready,
  tearDownNamespace,
  writePasswordSecret,
} from "../harness/world/sql.ts";
import { localEnv } from "../harness/world/env.ts";
import { eventually } from "../harness/world/kube.ts";
import {
  apply,
  assignedTenant,
  group,
  mariadbOrderArgs,
  readMariaDBOrder,
  secretData as secretDataOf,
  readyOf,
  type Order,
} from "./support/mariadb-world.ts";
import { OsloProcess, type Answer } from "./support/oslo/process.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";

const env = localEnv();
const server = adminServer();
const tag = randomBytes(3).toString("hex");
const ORDER = "keystone";
const GRACE_MS = 10_000;
/** Every password the test saw (and the administrator's); masked in what a helper shows. */
const secrets = new Set<string>([env.MARIADB_ADMIN_PASSWORD]);
const made = { databases: [] as string[], accounts: [] as string[] };
const work = mkdtempSync(join(tmpdir(), "oslo-db-"));
let cpNs = "";
let tenantNs = "";
let operator: OperatorProcess | undefined;

/** A Secret's data, decoded; its password remembered. */
const secretData = (namespace: string, name: string) => secretDataOf(namespace, name, secrets);

/**
 * The Secret as `pod.etcSources` mounts it into conf.d (a projected volume: each key a file, or only the
 * keys `items` maps, under the paths it names): a fresh folder per mount, as a restarted pod sees it.
 */
function mount(data: Record<string, string>, name: string, items?: Record<string, string>): string {
  const dir = join(work, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { mode: 0o700 });
  const files = items ?? Object.fromEntries(Object.keys(data).map((k) => [k, k]));
  for (const [key, path] of Object.entries(files)) {
    writeFileSync(join(dir, path), data[key] ?? "", { mode: 0o600 });
  }
  return dir;
}

/** A new service process on oslo.db with conf.d `dir`: writes `text` (or only loads, without it). */
const service = (dir: string, text?: string): Promise<Answer> =>
  OsloProcess.once(
    "db.py",
    [dir, ...(text === undefined ? [] : [text])],
    // One connection attempt: a refused login is an answer, not ten retries 10 s apart.
    { OS_DATABASE__MAX_RETRIES: "0" },
    [...secrets],
    60_000,
  );

/**
 * PyMySQL's refusal of a login: MariaDB's ER_ACCESS_DENIED_ERROR (1045) for a wrong password; an account
 * that no longer exists is refused with it or with ER_ACCESS_DENIED_NO_PASSWORD_ERROR (1698), both seen.
 */
const expectRefused = (answer: Answer, codes: string) => {
  expect(answer).toMatchObject({ ok: false, error: "OperationalError" });
  expect(answer.message).toMatch(new RegExp(`^\\((${codes}), "Access denied for user `));
};

const readOrder = () => readMariaDBOrder(tenantNs, ORDER);

const waitOrder = (what: string, done: (o: Order | undefined) => boolean, timeoutMs = 90_000) =>
  eventually(
    what,
    async () => {
      const o = await readOrder();
      return done(o) ? o : undefined;
    },
    timeoutMs,
  );

const orderSpec = (passwordGeneration?: number) =>
  apply(mariaDBDatabaseKind, tenantNs, ORDER, {
    spec: {
      controlPlaneRef: { name: "cp", namespace: cpNs },
      deletionPolicy: "Delete",
      rotation: { interval: "0s", gracePeriod: `${GRACE_MS / 1000}s` },
      ...(passwordGeneration ? { passwordGeneration } : {}),
    },
  });

beforeAll(async () => {
  ({ cpNs, tenantNs } = await assignedTenant("oslodb"));
  // Up to 15 minutes waiting for the operator lock (another file's operator), then its start.
  operator = await OperatorProcess.start({
    args: mariadbOrderArgs(env.MARIADB_ADMIN_USERNAME, "1s"),
    env: { VHOST_BROKER_MARIADB_PASSWORD: env.MARIADB_ADMIN_PASSWORD },
  });
}, 16 * 60_000);

afterAll(async () => {
  try {
    if (operator && (await readOrder())) {
      await custom.deleteNamespacedCustomObject({
        ...group(mariaDBDatabaseKind),
        namespace: tenantNs,
        name: ORDER,
      });
      await eventually("the order torn down", async () => ((await readOrder()) ? undefined : true), 60_000);
    }
  } finally {
    await operator?.stop();
    rmSync(work, { recursive: true, force: true });
    if (tenantNs) await tearDownNamespace(tenantNs);
    if (cpNs) await tearDownNamespace(cpNs);
    await dropFromServer(server, made);
    await server.close();
  }
}, 120_000);

describe("oslo.db with a seed-002 Connection's snippet in conf.d", () => {
  const dbName = `oslo_e2e_${tag}`;
  const user = `oslo_e2e_${tag}`;
  const mariaDbRef = { name: "mariadb" };
  const passwords = [randomBytes(18).toString("base64url"), randomBytes(18).toString("base64url")];
  passwords.forEach((p) => secrets.add(p));
  let first = "";

  const connectionReady = () =>
    eventually("the Connection Ready", async () =>
      ready(await getResource(sqlConnectionKind, cpNs, "glance"))?.status === "True" ? true : undefined,
    );

  it("connects, creates a table, writes and reads a row", async () => {
    made.databases.push(dbName);
    made.accounts.push(user);
    await writePasswordSecret(cpNs, "glance-db-password", passwords[0] ?? "");
    const passwordSecretKeyRef = { name: "glance-db-password", key: "password" };
    await createResource(sqlDatabaseKind, cpNs, "glance", { name: dbName, mariaDbRef });
    await createResource(sqlUserKind, cpNs, "glance", { name: user, mariaDbRef, passwordSecretKeyRef });
    await createResource(sqlGrantKind, cpNs, "glance", {
      mariaDbRef,
      privileges: ["SELECT", "INSERT", "CREATE"],
      database: dbName,
      username: user,
    });
    await createResource(sqlConnectionKind, cpNs, "glance", {
      mariaDbRef,
      username: user,
      passwordSecretKeyRef,
      host: env.MARIADB_HOST,
      port: env.MARIADB_PORT,
      database: dbName,
    });
    await connectionReady();
    const data = await secretData(cpNs, "glance");
    expect(Object.keys(data)).toEqual(["database.conf"]);
    first = mount(data, "connection-1");

    expect(await service(first)).toEqual({ ok: true, connection: true });
    expect(await service(first, "written with the Connection")).toEqual({
      ok: true,
      user: `${user}@%`,
      rows: ["written with the Connection"],
    });
  }, 120_000);

  it("after a rotation through its User's Secret: the rewritten snippet connects, the old one is refused", async () => {
    await writePasswordSecret(cpNs, "glance-db-password", passwords[1] ?? "");
    const data = await eventually("the Connection's Secret with the new password", async () => {
      const d = await secretData(cpNs, "glance");
      return d["database.conf"]?.includes(`:${passwords[1]}@`) ? d : undefined;
    });
    const second = mount(data, "connection-2");
    expect(await service(second, "after the rotation")).toEqual({
      ok: true,
      user: `${user}@%`,
      rows: ["written with the Connection", "after the rotation"],
    });
    // Seed 002 has no grace period: the account's password changed, the old snippet is refused.
    expectRefused(await service(first, "with the old snippet"), "1045");
  }, 90_000);
});

describe("oslo.db with a MariaDBDatabase order's Secret", () => {
  const key = () => ({ cluster: "", namespace: tenantNs, name: ORDER });
  let v1: Record<string, string> = {};

  it("mounted as it is into conf.d: oslo.config reads its database.conf; connects, creates a table, writes and reads a row", async () => {
    await orderSpec();
    const o = await waitOrder("the order Ready", (x) => readyOf(x)?.status === "True", 90_000);
    made.databases.push(o.status?.database ?? "");
    v1 = await secretData(tenantNs, `${ORDER}-credentials`);
    expect(v1["username"]).toBe(userName(key(), 1));
    expect(v1["database.conf"]).toBe(`[database]\nconnection = ${v1["connection"]}\n`);

    // Every key a file, as the Secret's volume has them: database.conf is the one *.conf file.
    const confD = mount(v1, "order");
    expect(readdirSync(confD).sort()).toEqual([
      "connection",
      "database",
      "database.conf",
      "host",
      "password",
      "port",
      "username",
    ]);
    expect(await service(confD)).toEqual({ ok: true, connection: true });
    // The control: without database.conf the other keys configure nothing.
    const others = Object.fromEntries(
      Object.keys(v1).flatMap((k) => (k === "database.conf" ? [] : [[k, k]])),
    );
    expect(await service(mount(v1, "order-without-conf", others))).toEqual({ ok: true, connection: false });

    expect(await service(confD, "generation 1")).toEqual({
      ok: true,
      user: `${v1["username"]}@%`,
      rows: ["generation 1"],
    });
  }, 120_000);

  it("after a raised passwordGeneration: the new Secret in conf.d connects in a new process, the old files are refused after the sweep", async () => {
    // A pod not yet restarted keeps generation 1's files.
    const old = mount(v1, "order-old");
    await orderSpec(2);
    const rotated = await waitOrder(
      "generation 2 delivered",
      (o) => o?.status?.passwordGeneration === 2 && readyOf(o)?.status === "True",
      60_000,
    );
    const v2 = await eventually("the Secret to carry generation 2", async () => {
      const d = await secretData(tenantNs, `${ORDER}-credentials`);
      return d["username"] === userName(key(), 2) ? d : undefined;
    });
    expect(v2["database.conf"]).toBe(`[database]\nconnection = ${v2["connection"]}\n`);
    expect(v2["database.conf"]).not.toBe(v1["database.conf"]);
    // Within the grace period a process still configured with generation 1 connects anew.
    const deleteAt = Date.parse(rotated.status?.previousPasswordDeleteAt ?? "");
    const during = await service(old, "late generation 1");
    expect(Date.now()).toBeLessThan(deleteAt);
    expect(during).toMatchObject({ ok: true, user: `${v1["username"]}@%` });
    // The new Secret written to the service's conf.d again; a new process reads it.
    const confD = mount(v2, "order");
    expect(await service(confD, "generation 2")).toEqual({
      ok: true,
      user: `${v2["username"]}@%`,
      rows: ["generation 1", "late generation 1", "generation 2"],
    });

    await waitOrder(
      "the sweep of generation 1",
      (o) => o?.status?.passwordGeneration === 2 && o.status.previousPasswordDeleteAt === undefined,
      GRACE_MS + 30_000,
    );
    expect(await server.select("SELECT 1 FROM mysql.user WHERE User = ?", [v1["username"] ?? ""])).toEqual(
      [],
    );
    expectRefused(await service(old, "after the sweep"), "1045|1698");
    expect(await service(confD, "after the sweep")).toMatchObject({ ok: true, user: `${v2["username"]}@%` });
  }, 120_000);
});

describe("the operator's logs", () => {
  it("hold no password", () => {
    if (!operator) throw new Error("no operator");
    expect(secrets.size).toBeGreaterThanOrEqual(5);
    const logs = operator.logs();
    for (const secret of secrets) {
      for (const form of [secret, encodeURIComponent(secret)]) expect(logs.includes(form)).toBe(false);
    }
  });
});
