// The server of the settings (--mariadb-host) with its administrator's password in a file
// (--mariadb-password-file), through the operator process, as the chart runs it with a mounted Secret.
// While the file is missing a Database waits, its Ready condition naming the file; once written, it
// gets Ready. Then the password is rotated on the server and in the file (replaced as the kubelet
// replaces a Secret's file), the old sessions are killed, and a new Database still gets Ready: the file
// is read again and a new pool opened, without a restart. No password reaches the log or a condition.
import { randomBytes } from "node:crypto";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqlDatabaseKind } from "../src/api/index.ts";
import {
  adminServer,
  createAdminAccount,
  createResource,
  dropFromServer,
  env,
  getResource,
  ready,
  setAccountPassword,
  setUpNamespace,
  tearDownNamespace,
} from "../harness/world/sql.ts";
import { eventually } from "../harness/world/kube.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";

const tag = randomBytes(3).toString("hex");
const admin = `vb_pwfile_${tag}`;
const passwords = [`pwf1-${randomBytes(9).toString("hex")}`, `pwf2-${randomBytes(9).toString("hex")}`];
const server = adminServer();
const dir = mkdtempSync(join(tmpdir(), "vb-pwfile-"));
const passwordFile = join(dir, "password");
const databases: string[] = [];
let namespace = "";
let operator: OperatorProcess | undefined;

/** Replaces the file in one step, as the kubelet swaps a mounted Secret's files. */
function writePasswordFile(password: string): void {
  writeFileSync(join(dir, ".next"), `${password}\n`);
  renameSync(join(dir, ".next"), passwordFile);
}

async function createDatabase(name: string): Promise<string> {
  const dbName = `pwf_${tag}_${name.replaceAll("-", "_")}`;
  databases.push(dbName);
  await createResource(sqlDatabaseKind, namespace, name, { name: dbName, mariaDbRef: { name: "mariadb" } });
  return dbName;
}

async function readyDatabase(name: string): Promise<void> {
  await eventually(
    `Database ${name} Ready`,
    async () =>
      ready(await getResource(sqlDatabaseKind, namespace, name))?.status === "True" ? true : undefined,
    30_000,
  );
}

async function databaseOnServer(name: string): Promise<boolean> {
  const rows = await server.select("SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", [name]);
  return rows.length > 0;
}

async function adminSessions(): Promise<number[]> {
  const rows = await server.select<{ id: number }>(
    "SELECT ID AS id FROM information_schema.PROCESSLIST WHERE USER = ?",
    [admin],
  );
  return rows.map((r) => Number(r.id));
}

beforeAll(async () => {
  namespace = await setUpNamespace("sqlpwf");
  await createAdminAccount(server, admin, passwords[0]!);
  operator = await OperatorProcess.start({
    args: [
      "--topology-controller=false",
      "--sql-controller",
      // Only this file's ref: the process serves every namespace, and other files' objects are theirs.
      `--sql-mariadb-refs=names:${namespace}/mariadb`,
      `--mariadb-host=${env.MARIADB_HOST}`,
      `--mariadb-port=${env.MARIADB_PORT}`,
      `--mariadb-username=${admin}`,
      `--mariadb-password-file=${passwordFile}`,
      "--connection-wait-interval=1s",
      "--transient-requeue-interval=1s",
    ],
  });
}, 120_000);

afterAll(async () => {
  await operator?.stop();
  await tearDownNamespace(namespace);
  await dropFromServer(server, { databases, accounts: [admin] });
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}, 120_000);

describe("the settings' server with its password in a file, operator process", () => {
  it("waits while the file is missing, naming it, and serves once it is written", async () => {
    const dbName = await createDatabase("first");
    const waiting = await eventually("Ready False naming the password file", async () => {
      const c = ready(await getResource(sqlDatabaseKind, namespace, "first"));
      return c?.status === "False" && c.message?.includes(passwordFile) ? c : undefined;
    });
    expect(waiting.message).toContain(
      `MariaDB ${namespace}/mariadb: the administrator's password file ${passwordFile} (mariadb-password-file) does not exist`,
    );
    expect(await databaseOnServer(dbName)).toBe(false);
    writePasswordFile(passwords[0]!);
    await readyDatabase("first");
    expect(await databaseOnServer(dbName)).toBe(true);
  }, 60_000);

  it("reads the file again after a rotation: a new Database still gets Ready, no password logged", async () => {
    await setAccountPassword(server, admin, passwords[1]!);
    writePasswordFile(passwords[1]!);
    // The pool's sessions logged in with the old password: they go, so that only a new login serves.
    const killed = await adminSessions();
    for (const id of killed) await server.run(`KILL ${id}`).catch(() => undefined);
    const dbName = await createDatabase("after-rotation");
    await readyDatabase("after-rotation");
    expect(await databaseOnServer(dbName)).toBe(true);
    // The administrator's sessions now are new ones, logged in with the new password.
    expect((await adminSessions()).filter((id) => killed.includes(id))).toEqual([]);
    const conditions = JSON.stringify([
      await getResource(sqlDatabaseKind, namespace, "first"),
      await getResource(sqlDatabaseKind, namespace, "after-rotation"),
    ]);
    const logs = operator?.logs() ?? "";
    // The passes were logged (the check below is not of an empty log).
    expect(logs).toContain("declared on the server");
    for (const password of passwords) {
      expect(logs).not.toContain(password);
      expect(conditions).not.toContain(password);
    }
  }, 60_000);
});
