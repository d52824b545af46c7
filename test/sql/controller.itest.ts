// The built-in SQL controller as users run it: `node src/main.ts --sql-controller` against the local
// kube-apiserver and MariaDB. Each kind is created, changed, repaired after an out-of-band DROP or
// REVOKE, and deleted under Skip and under Delete; a Grant made before its User succeeds on a later
// pass; a Connection's Secret logs a real client in; a password rotated through the User's Secret
// reaches the server and the old one is refused. No password reaches a log line, an event or a
// condition. Everything that depends on requeues goes through the operator process, which runs with
// nothing but a token of deploy/vhost-broker's ServiceAccount: the chart's RBAC is all it needs.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SQL_ADOPT_ANNOTATION,
  SQL_CLAIM_ANNOTATION,
  sqlConnectionKind,
  sqlDatabaseKind,
  sqlGrantKind,
  sqlKinds,
  sqlUserKind,
} from "../../src/api/index.ts";
import { OperatorProcess } from "../../harness/operator/operator-process.ts";
import {
  installRelease,
  serviceAccountToken,
  tokenKubeconfig,
  uninstallRelease,
  type Release,
} from "../../harness/charts/release.ts";
import { quoteIdentifier as quote } from "../../src/mariadb/sql-text.ts";
import { eventually } from "../../harness/world/kube.ts";
import {
  adminServer,
  asUser,
  cluster,
  createResource,
  deleteResource,
  dropFromServer,
  env,
  getResource,
  patchSpec,
  readSecret,
  ready,
  secretText,
  setUpNamespace,
  tearDownNamespace,
  unique,
  writePasswordSecret,
  type SqlResource,
} from "../../harness/world/sql.ts";

const server = adminServer();
const tag = unique("t").slice(2);
const mariaDbRef = { name: "mariadb" };
/** Every password this file hands out, for the closing check of logs, events and conditions. */
const passwords: string[] = [];
const databases: string[] = [];
const users: string[] = [];
let namespace = "";
let operator: OperatorProcess | undefined;
let release: Release | undefined;
let kubeconfig: { path: string; remove: () => void } | undefined;

function password(): string {
  const value = `pw'${unique("x")}"%_\\${tag}`;
  passwords.push(value);
  return value;
}

async function databaseOnServer(name: string): Promise<{ charset: string } | undefined> {
  const [row] = await server.select<{ charset: string }>(
    "SELECT DEFAULT_CHARACTER_SET_NAME AS charset FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
    [name],
  );
  return row;
}

async function userOnServer(name: string): Promise<{ max: number } | undefined> {
  const [row] = await server.select<{ max: number }>(
    "SELECT max_user_connections AS max FROM mysql.user WHERE User = ? AND Host = '%'",
    [name],
  );
  return row;
}

async function canLogIn(user: string, pass: string, database?: string): Promise<boolean> {
  return asUser(user, pass, "SELECT 1", database ? { database } : {}).then(
    () => true,
    () => false,
  );
}

async function readyWith(
  kind: typeof sqlDatabaseKind,
  name: string,
  status: "True" | "False",
  text = "",
): Promise<SqlResource> {
  return eventually(`${kind.kind} ${name} Ready ${status} ${text}`, async () => {
    const resource = await getResource(kind, namespace, name);
    const condition = ready(resource);
    return condition?.status === status && condition.message.includes(text) ? resource : undefined;
  });
}

beforeAll(async () => {
  namespace = await setUpNamespace("sql");
  release = await installRelease(cluster, "vb-sql", {
    "settings.openbao-address": env.BAO_ADDR,
    "settings.sql-controller": "true",
    "settings.mariadb-host": env.MARIADB_HOST,
  });
  kubeconfig = tokenKubeconfig(await serviceAccountToken(cluster, release));
  operator = await OperatorProcess.start({
    kubeconfig: kubeconfig.path,
    args: [
      "--topology-controller=false",
      "--sql-controller",
      `--mariadb-host=${env.MARIADB_HOST}`,
      `--mariadb-port=${env.MARIADB_PORT}`,
      `--mariadb-username=${env.MARIADB_ADMIN_USERNAME}`,
      "--sql-mariadb-refs=names:mariadb",
      "--sql-verification-period=3s",
      "--connection-wait-interval=1s",
      "--transient-requeue-interval=1s",
    ],
    env: { VHOST_BROKER_MARIADB_PASSWORD: env.MARIADB_ADMIN_PASSWORD },
  });
});

afterAll(async () => {
  await operator?.stop();
  kubeconfig?.remove();
  await uninstallRelease(cluster, release).catch(() => undefined);
  await tearDownNamespace(namespace);
  await dropFromServer(server, { databases, accounts: users });
  await server.close();
});

describe("Database", () => {
  it("creates it, repairs a DROP and a changed character set, and leaves it when deleted under Skip", async () => {
    const dbName = `cinder_${tag}`;
    databases.push(dbName);
    await createResource(sqlDatabaseKind, namespace, "cinder", { name: dbName, mariaDbRef });
    const created = await readyWith(sqlDatabaseKind, "cinder", "True", `created database ${dbName}`);
    expect(ready(created)).toMatchObject({
      reason: "Reconciled",
      observedGeneration: created.metadata.generation,
    });
    expect(created.metadata.finalizers).toBeUndefined();
    expect(await databaseOnServer(dbName)).toEqual({ charset: "utf8mb3" });

    await server.run(`DROP DATABASE ${quote(dbName)}`);
    await eventually("the dropped database back", () => databaseOnServer(dbName));
    await server.run(`ALTER DATABASE ${quote(dbName)} CHARACTER SET latin1 COLLATE latin1_swedish_ci`);
    await eventually("the character set repaired", async () =>
      (await databaseOnServer(dbName))?.charset === "utf8mb3" ? true : undefined,
    );

    await deleteResource(sqlDatabaseKind, namespace, "cinder");
    await eventually("the Database gone", async () =>
      (await getResource(sqlDatabaseKind, namespace, "cinder")) ? undefined : true,
    );
    expect(await databaseOnServer(dbName)).toBeDefined();
  });

  it("takes a finalizer when changed to Delete, and drops the database when deleted", async () => {
    const dbName = `glance_${tag}`;
    databases.push(dbName);
    await createResource(sqlDatabaseKind, namespace, "glance", { name: dbName, mariaDbRef });
    await readyWith(sqlDatabaseKind, "glance", "True");
    await patchSpec(sqlDatabaseKind, namespace, "glance", { cleanupPolicy: "Delete" });
    await eventually("the cleanup finalizer", async () =>
      (await getResource(sqlDatabaseKind, namespace, "glance"))?.metadata.finalizers?.includes(
        "mariadb.osh.openstack.org/database-cleanup",
      )
        ? true
        : undefined,
    );
    await deleteResource(sqlDatabaseKind, namespace, "glance");
    await eventually("the Database gone", async () =>
      (await getResource(sqlDatabaseKind, namespace, "glance")) ? undefined : true,
    );
    expect(await databaseOnServer(dbName)).toBeUndefined();
  });
});

describe("User, Grant and Connection", () => {
  const user = `nova_${tag}`;
  const dbName = `nova_cell0_${tag}`;
  let first = "";

  it("makes a Grant created before its User wait, and succeed once the User exists", async () => {
    users.push(user);
    databases.push(dbName);
    first = password();
    await writePasswordSecret(namespace, "nova-db-password", first);
    await createResource(sqlGrantKind, namespace, "nova", {
      mariaDbRef,
      privileges: ["SELECT", "INSERT", "CREATE"],
      database: dbName,
      username: user,
    });
    const waiting = await readyWith(sqlGrantKind, "nova", "False", "Can't find any matching row");
    expect(ready(waiting)?.reason).toBe("ReconcileError");

    await createResource(sqlDatabaseKind, namespace, "nova-cell0", { name: dbName, mariaDbRef });
    await createResource(sqlUserKind, namespace, "nova", {
      name: user,
      mariaDbRef,
      passwordSecretKeyRef: { name: "nova-db-password", key: "password" },
    });
    await readyWith(sqlUserKind, "nova", "True", `created user '${user}'@'%'`);
    await readyWith(sqlGrantKind, "nova", "True", `granted SELECT, INSERT, CREATE on ${dbName}.*`);
    expect(await asUser(user, first, "CREATE TABLE t (id INT)", { database: dbName })).toBeDefined();
  });

  it("writes the Connection's Secret, owned by it, holding an oslo.config snippet a client logs in with, and repairs its deletion", async () => {
    await createResource(sqlConnectionKind, namespace, "nova-cell0", {
      mariaDbRef,
      username: user,
      passwordSecretKeyRef: { name: "nova-db-password", key: "password" },
      host: env.MARIADB_HOST,
      port: env.MARIADB_PORT,
      database: dbName,
    });
    const connection = await readyWith(sqlConnectionKind, "nova-cell0", "True", "Secret nova-cell0 holds");
    const secret = await readSecret(namespace, "nova-cell0");
    expect(secret?.metadata?.ownerReferences).toEqual([
      expect.objectContaining({
        kind: "Connection",
        name: "nova-cell0",
        uid: connection.metadata.uid,
        controller: true,
      }),
    ]);
    const snippet = secretText(secret, "database.conf") ?? "";
    const match =
      /^\[database\]\nconnection = mysql\+pymysql:\/\/([^:]+):([^@]+)@([^:]+):(\d+)\/([^?]+)\?charset=utf8\n$/.exec(
        snippet,
      );
    expect(match, snippet.replace(/:[^@]+@/, ":***@")).not.toBeNull();
    const [, u = "", p = "", host = "", port = "", db = ""] = match ?? [];
    expect(decodeURIComponent(p)).toBe(first);
    const rows = await asUser(decodeURIComponent(u), decodeURIComponent(p), "SELECT DATABASE() AS db", {
      host,
      port: Number(port),
      database: decodeURIComponent(db),
    });
    expect(rows).toEqual([{ db: dbName }]);

    await cluster.core.deleteNamespacedSecret({ namespace, name: "nova-cell0" });
    await eventually("the deleted Secret back", async () =>
      secretText(await readSecret(namespace, "nova-cell0"), "database.conf") === snippet ? true : undefined,
    );
  });

  it("rotates the password through the User's Secret: the new one logs in, the old one is refused", async () => {
    const second = password();
    await writePasswordSecret(namespace, "nova-db-password", second);
    await eventually("the new password to log in", async () =>
      (await canLogIn(user, second)) ? true : undefined,
    );
    await expect(asUser(user, first, "SELECT 1")).rejects.toThrow(/Access denied/);
    // The snippet percent-encodes every byte but the unreserved (as Python's quote(safe="")), the
    // password's quote included, so it is compared decoded.
    await eventually("the Connection's Secret to carry the new password", async () => {
      const snippet = secretText(await readSecret(namespace, "nova-cell0"), "database.conf") ?? "";
      const encoded = /^connection = mysql\+pymysql:\/\/[^:]+:([^@]+)@/m.exec(snippet)?.[1] ?? "";
      return decodeURIComponent(encoded) === second ? true : undefined;
    });
    first = second;
  });

  it("changes the account's connection limit, and repairs a REVOKE and a dropped account", async () => {
    await patchSpec(sqlUserKind, namespace, "nova", { maxUserConnections: 7 });
    await eventually("the new limit", async () => ((await userOnServer(user))?.max === 7 ? true : undefined));

    await server.run(
      `REVOKE ALL PRIVILEGES ON ${quote(dbName.replaceAll("_", "\\_"))}.* FROM ${quote(user)}@'%'`,
    );
    await expect(asUser(user, first, "SELECT 1", { database: dbName })).rejects.toThrow(/denied/);
    await eventually("the revoked privileges back", async () =>
      (await canLogIn(user, first, dbName)) ? true : undefined,
    );

    await server.run(`DROP USER ${quote(user)}@'%'`);
    await eventually("the dropped account back, with its grant", async () =>
      (await canLogIn(user, first, dbName)) ? true : undefined,
    );
  });

  it("reports a privilege taken out of a Grant without revoking it", async () => {
    await patchSpec(sqlGrantKind, namespace, "nova", { privileges: ["SELECT", "CREATE"] });
    await readyWith(sqlGrantKind, "nova", "True", "also holds INSERT");
    expect(await asUser(user, first, "INSERT INTO t VALUES (1)", { database: dbName })).toBeDefined();
  });

  it("revokes the grant and drops the account when deleted under Delete, and keeps an account under Skip", async () => {
    const kept = `kept_${tag}`;
    users.push(kept);
    await createResource(sqlUserKind, namespace, "kept", {
      name: kept,
      mariaDbRef,
      passwordSecretKeyRef: { name: "nova-db-password", key: "password" },
    });
    await readyWith(sqlUserKind, "kept", "True");
    await deleteResource(sqlUserKind, namespace, "kept");
    await eventually("the kept User gone", async () =>
      (await getResource(sqlUserKind, namespace, "kept")) ? undefined : true,
    );
    expect(await userOnServer(kept)).toBeDefined();

    for (const kind of [sqlGrantKind, sqlUserKind]) {
      await patchSpec(kind, namespace, "nova", { cleanupPolicy: "Delete" });
      await eventually(`${kind.kind}'s finalizer`, async () =>
        (await getResource(kind, namespace, "nova"))?.metadata.finalizers?.length ? true : undefined,
      );
    }
    await deleteResource(sqlGrantKind, namespace, "nova");
    await eventually("the Grant gone", async () =>
      (await getResource(sqlGrantKind, namespace, "nova")) ? undefined : true,
    );
    // The spec's privileges are revoked; INSERT, which the spec no longer names, is not the Grant's.
    await expect(asUser(user, first, "SELECT * FROM t", { database: dbName })).rejects.toThrow(/denied/);
    const held = await server.select<{ p: string }>(
      "SELECT PRIVILEGE_TYPE AS p FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ?",
      [`'${user}'@'%'`],
    );
    expect(held.map((r) => r.p)).toEqual(["INSERT"]);
    await deleteResource(sqlUserKind, namespace, "nova");
    await eventually("the User gone", async () =>
      (await getResource(sqlUserKind, namespace, "nova")) ? undefined : true,
    );
    expect(await userOnServer(user)).toBeUndefined();
  });
});

describe("what the controller leaves alone or refuses", () => {
  it("leaves an object that references another MariaDB untouched", async () => {
    const dbName = `foreign_${tag}`;
    databases.push(dbName);
    await createResource(sqlDatabaseKind, namespace, "foreign", {
      name: dbName,
      mariaDbRef: { name: "other" },
    });
    await eventually("the log line about it", async () =>
      operator?.logs().includes(`MariaDB ${namespace}/other is not in the served list`) ? true : undefined,
    );
    const foreign = await getResource(sqlDatabaseKind, namespace, "foreign");
    expect(foreign?.status).toBeUndefined();
    expect(foreign?.metadata.finalizers).toBeUndefined();
    expect(await databaseOnServer(dbName)).toBeUndefined();
  });

  it("turns Ready False naming a field it cannot honour", async () => {
    const secretRef = { name: "nova-db-password", key: "password" };
    await createResource(sqlUserKind, namespace, "plugin", {
      mariaDbRef,
      passwordPlugin: { pluginNameSecretKeyRef: secretRef },
    });
    await createResource(sqlUserKind, namespace, "ssl", {
      mariaDbRef,
      passwordSecretKeyRef: secretRef,
      require: { ssl: true },
    });
    await createResource(sqlConnectionKind, namespace, "cert", {
      mariaDbRef,
      username: "u",
      tlsClientCertSecretRef: { name: "c" },
    });
    await readyWith(sqlUserKind, "plugin", "False", "spec.passwordPlugin is set");
    await readyWith(sqlUserKind, "ssl", "False", "spec.require.ssl is set");
    await readyWith(sqlConnectionKind, "cert", "False", "spec.tlsClientCertSecretRef is set");
    expect(await userOnServer("plugin")).toBeUndefined();
  });

  it("leaves a Secret of the Connection's name that it does not own alone (NotOwned)", async () => {
    await cluster.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: "taken" }, stringData: { mine: "yes" } },
    });
    await createResource(sqlConnectionKind, namespace, "taken", {
      mariaDbRef,
      username: `kept_${tag}`,
      passwordSecretKeyRef: { name: "nova-db-password", key: "password" },
      host: env.MARIADB_HOST,
    });
    const refused = await readyWith(sqlConnectionKind, "taken", "False", "is not owned by this Connection");
    expect(ready(refused)?.reason).toBe("NotOwned");
    expect(secretText(await readSecret(namespace, "taken"), "mine")).toBe("yes");
    expect((await readSecret(namespace, "taken"))?.data?.["database.conf"]).toBeUndefined();
  });

  it("refuses a claimed Database, User and Grant whose schema and account it did not create (NotOwned), leaving them as they are", async () => {
    const claim = { [SQL_CLAIM_ANNOTATION]: `MariaDBDatabase /${namespace}/thief` };
    const dbName = `victim_${tag}`;
    const victim = `victim-${tag}`;
    databases.push(dbName);
    users.push(victim);
    await server.run(`CREATE DATABASE ${quote(dbName)} CHARACTER SET latin1`);
    await server.run(`CREATE TABLE ${quote(dbName)}.data (secret INT)`);
    await server.run(`CREATE USER ${quote(victim)}@'%' IDENTIFIED BY 'theirs'`);
    const theirs = await server.select<{ h: string }>(
      "SELECT authentication_string AS h FROM mysql.user WHERE User = ?",
      [victim],
    );
    const secretRef = { name: "nova-db-password", key: "password" };
    await createResource(
      sqlDatabaseKind,
      namespace,
      "thief",
      { name: dbName, mariaDbRef, cleanupPolicy: "Delete" },
      claim,
    );
    await createResource(
      sqlUserKind,
      namespace,
      "thief",
      { name: victim, mariaDbRef, passwordSecretKeyRef: secretRef, cleanupPolicy: "Delete" },
      claim,
    );
    await createResource(
      sqlGrantKind,
      namespace,
      "thief",
      { privileges: ["ALL PRIVILEGES"], database: dbName, table: "*", username: victim, mariaDbRef },
      claim,
    );
    for (const kind of [sqlDatabaseKind, sqlUserKind]) {
      const refused = await readyWith(kind, "thief", "False", "left alone");
      expect(ready(refused)?.reason).toBe("NotOwned");
    }
    // The Grant waits for an account recorded under its claim, which its refused User never gets.
    await readyWith(sqlGrantKind, "thief", "False", "is not recorded for");
    expect(ready(await getResource(sqlDatabaseKind, namespace, "thief"))?.message).toBe(
      `database ${dbName} exists on the server, that this controller did not create, not for ${claim[SQL_CLAIM_ANNOTATION]}: it is left alone`,
    );
    expect((await databaseOnServer(dbName))?.charset).toBe("latin1");
    expect(
      await server.select("SELECT authentication_string AS h FROM mysql.user WHERE User = ?", [victim]),
    ).toEqual(theirs);
    expect(
      await server.select(
        "SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ?",
        [`'${victim}'@'%'`],
      ),
    ).toEqual([]);
    // Deleted under Delete, they drop nothing that is not theirs.
    for (const kind of [sqlGrantKind, sqlUserKind, sqlDatabaseKind]) {
      await deleteResource(kind, namespace, "thief");
      await eventually(`the ${kind.kind} gone`, async () =>
        (await getResource(kind, namespace, "thief")) ? undefined : true,
      );
    }
    expect(await databaseOnServer(dbName)).toBeDefined();
    expect(await canLogIn(victim, "theirs")).toBe(true);
  });

  it("takes over an unmarked schema and account with the adopt leave (a child made before claims), and marks them", async () => {
    const claim = `MariaDBDatabase /${namespace}/legacy`;
    const annotations = { [SQL_CLAIM_ANNOTATION]: claim, [SQL_ADOPT_ANNOTATION]: "true" };
    const dbName = `legacy_${tag}`;
    const account = `legacy-${tag}`;
    databases.push(dbName);
    users.push(account);
    await server.run(`CREATE DATABASE ${quote(dbName)}`);
    await server.run(`CREATE TABLE ${quote(dbName)}.kept (v INT)`);
    await server.run(`CREATE USER ${quote(account)}@'%' IDENTIFIED BY 'before'`);
    const secretRef = { name: "nova-db-password", key: "password" };
    await createResource(sqlDatabaseKind, namespace, "legacy", { name: dbName, mariaDbRef }, annotations);
    await createResource(
      sqlUserKind,
      namespace,
      "legacy",
      { name: account, mariaDbRef, passwordSecretKeyRef: secretRef },
      annotations,
    );
    await readyWith(sqlDatabaseKind, "legacy", "True");
    await readyWith(sqlUserKind, "legacy", "True");
    const [schema] = await server.select<{ comment: string }>(
      "SELECT SCHEMA_COMMENT AS comment FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
      [dbName],
    );
    expect(schema?.comment).toBe(`vhost-broker claim ${claim}`);
    const [row] = await server.select<{ claim: string }>(
      "SELECT claim FROM vhost_broker.account_claims WHERE user = ? AND host = '%'",
      [account],
    );
    expect(row?.claim).toBe(claim);
    expect(await canLogIn(account, "before")).toBe(false);
    const tables = await server.select("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", [
      dbName,
    ]);
    expect(tables).toHaveLength(1);
  });

  it("puts no password in a log line, an event or a condition", async () => {
    const logs = operator?.logs() ?? "";
    expect(logs.length).toBeGreaterThan(0);
    const events = await cluster.config.makeApiClient(k8s.EventsV1Api).listNamespacedEvent({ namespace });
    expect(events.items.length).toBeGreaterThan(0);
    const conditions: unknown[] = [];
    for (const kind of sqlKinds) {
      const list = (await cluster.config.makeApiClient(k8s.CustomObjectsApi).listNamespacedCustomObject({
        group: kind.group,
        version: kind.version,
        plural: kind.plural,
        namespace,
      })) as { items: SqlResource[] };
      conditions.push(...list.items.map((i) => i.status?.conditions));
    }
    const texts = [logs, JSON.stringify(events.items), JSON.stringify(conditions)];
    for (const secret of [...passwords, ...passwords.map(encodeURIComponent), env.MARIADB_ADMIN_PASSWORD]) {
      for (const text of texts) expect(text.includes(secret), "a password leaked").toBe(false);
    }
  });
});
