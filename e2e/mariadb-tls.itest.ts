// MariaDB over TLS end to end, against the local server's TLS (its private CA, a client certificate it
// signed): the operator process runs the SQL controller and MariaDBDatabase orders with mariadb-tls and
// a client certificate, as an administrator the test makes with REQUIRE X509 (so every admin
// connection provably presents the certificate). An order is delivered with the server's CA, its
// accounts REQUIRE X509 (seed 002), its credentials log in over TLS with a client certificate and are
// refused without one, and a rotation switches (its successor check logs in over TLS with the
// operator's certificate). Without a client certificate the check says what is missing, and so does a
// warning at start-up. A tenant logs in as OpenStack-Helm's pods do: the delivered URL, read by
// oslo.config from the Secret's database.conf in a conf.d folder, names its TLS files under mariadb-tenant-tls-dir (a temporary folder
// here, standing for /etc/mysql/certs); the test puts the delivered ca.crt and the deployment's client
// certificate there, and oslo.db's engine over SQLAlchemy and PyMySQL (OSLO_PYTHON) connects with
// exactly that URL.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installCrds } from "../harness/world/managed-bus.ts";
import { controlPlaneKind, mariaDBDatabaseKind } from "../src/api/index.ts";
import { defaultTransport } from "../src/mariadb/client.ts";
import { defaultDatabaseName, userName } from "../src/orders/mariadb/naming.ts";
import { sqlLoginCheck } from "../src/orders/mariadb/successor-check.ts";
import { adminServer, custom, tearDownNamespace } from "../harness/world/sql.ts";
import { localEnv } from "../harness/world/env.ts";
import { eventually, freshNamespace, isApiError, testCluster } from "../harness/world/kube.ts";
import { apply, group, managedMariaDB, mariadbOrderArgs } from "./support/mariadb-world.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";

const env = localEnv();
const cluster = testCluster("management");
const server = adminServer();
const merge = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);

const ca = readFileSync(env.MARIADB_CA_FILE, "utf8");
const clientCert = {
  cert: readFileSync(env.MARIADB_CLIENT_CERT_FILE, "utf8"),
  key: readFileSync(env.MARIADB_CLIENT_KEY_FILE, "utf8"),
};
const tag = randomBytes(3).toString("hex");
/** The tenant's pod: its mariadb-tenant-tls-dir and a conf.d folder, under one temporary folder. */
const pod = mkdtempSync(join(tmpdir(), "mdbtls-tenant-"));
const tenantTlsDir = join(pod, "etc/mysql/certs");
/** The operator's administrator: made here, REQUIRE X509. */
const admin = { user: `tls-admin-${tag}`, password: `pw-${randomBytes(12).toString("base64url")}` };
const ORDER = "tls-order";

let cpNs = "";
let tenantNs = "";
let operator: OperatorProcess | undefined;
const key = () => ({ cluster: "", namespace: tenantNs, name: ORDER });
/** Every password the test saw; none may appear in the operator's log. */
const passwords = new Set([admin.password]);

interface Order {
  status?: { conditions?: { type: string; status: string }[]; passwordGeneration?: number };
}

async function waitReady(generation: number): Promise<void> {
  await eventually(
    `${ORDER} Ready with generation ${generation}`,
    async () => {
      const order = (await custom
        .getNamespacedCustomObject({ ...group(mariaDBDatabaseKind), namespace: tenantNs, name: ORDER })
        .catch((error: unknown) => {
          if (isApiError(error, 404)) return undefined;
          throw error;
        })) as Order | undefined;
      const ready = order?.status?.conditions?.find((c) => c.type === "Ready");
      return ready?.status === "True" && order?.status?.passwordGeneration === generation ? true : undefined;
    },
    45_000,
    250,
  );
}

async function delivered(): Promise<Record<string, string>> {
  const secret = await cluster.core.readNamespacedSecret({
    namespace: tenantNs,
    name: `${ORDER}-credentials`,
  });
  const data = Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
  );
  if (data["password"]) passwords.add(data["password"]);
  return data;
}

/** A consumer's login with the delivered keys; `tls`: what it presents. The session's cipher, or the error. */
async function logIn(
  data: Record<string, string>,
  tls: "client certificate" | "CA only" | "plain",
): Promise<string> {
  const ssl =
    tls === "plain"
      ? undefined
      : { ca: data["ca.crt"], rejectUnauthorized: true, ...(tls === "client certificate" ? clientCert : {}) };
  const connection = await mysql.createConnection({
    host: data["host"],
    port: Number(data["port"]),
    user: data["username"],
    password: data["password"],
    database: data["database"],
    ssl,
  });
  try {
    const [rows] = await connection.query("SHOW SESSION STATUS LIKE 'Ssl_cipher'");
    return (rows as { Value: string }[])[0]?.Value ?? "";
  } finally {
    await connection.end();
  }
}

const refusal = (data: Record<string, string>, tls: "CA only" | "plain") =>
  logIn(data, tls).then(
    () => "logged in",
    (error: { code?: string }) => error.code ?? "no code",
  );

async function sslType(user: string): Promise<string | undefined> {
  const rows = await server.select<{ ssl_type: string }>("SELECT ssl_type FROM mysql.user WHERE User = ?", [
    user,
  ]);
  return rows[0]?.ssl_type;
}

// Within the project's hook timeout (10 min): OperatorProcess.start() may wait for another run's
// operator to give up the operator lock.
beforeAll(async () => {
  await installCrds(cluster.config);
  cpNs = await freshNamespace(cluster, "mdbtls-cp");
  tenantNs = await freshNamespace(cluster, "mdbtls-tenant");
  await server.run(`CREATE USER '${admin.user}'@'%' IDENTIFIED BY '${admin.password}' REQUIRE X509`);
  await server.run(`GRANT ALL PRIVILEGES ON *.* TO '${admin.user}'@'%' WITH GRANT OPTION`);
  // The ControlPlane's credentials Secret names the same administrator and carries the server's CA.
  await managedMariaDB(cluster.core, custom, cpNs, {
    username: admin.user,
    password: admin.password,
    host: env.MARIADB_HOST,
    port: String(env.MARIADB_PORT),
    "ca.crt": ca,
  });
  await apply(controlPlaneKind, cpNs, "cp", {
    spec: {
      namespaceAssignments: [{ namespace: tenantNs }],
      infrastructure: { database: { clusterRef: { name: "mariadb" }, secretRef: { name: "mariadb-admin" } } },
    },
  });
  operator = await OperatorProcess.start({
    args: mariadbOrderArgs(admin.user, "2s", [
      "--mariadb-tls",
      `--mariadb-ca-file=${env.MARIADB_CA_FILE}`,
      `--mariadb-tls-cert-file=${env.MARIADB_CLIENT_CERT_FILE}`,
      `--mariadb-tls-key-file=${env.MARIADB_CLIENT_KEY_FILE}`,
      `--mariadb-tenant-tls-dir=${tenantTlsDir}`,
    ]),
    env: { VHOST_BROKER_MARIADB_PASSWORD: admin.password },
  });
});

afterAll(async () => {
  await operator?.stop();
  for (const namespace of [tenantNs, cpNs]) {
    if (!namespace) continue;
    for (const kind of [mariaDBDatabaseKind, controlPlaneKind]) {
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
  if (tenantNs) {
    await server.run(`DROP DATABASE IF EXISTS \`${defaultDatabaseName(key())}\``).catch(() => undefined);
    for (const generation of [1, 2])
      await server.run(`DROP USER IF EXISTS '${userName(key(), generation)}'@'%'`).catch(() => undefined);
  }
  await server.run(`DROP USER IF EXISTS '${admin.user}'@'%'`).catch(() => undefined);
  await server.close();
  rmSync(pod, { recursive: true, force: true });
});

// The tenant's service: oslo.config reads [database] connection from a conf.d file (the delivered
// Secret's database.conf, as OpenStack-Helm's pod.etcSources mounts it), oslo.db makes the engine (SQLAlchemy, PyMySQL), and a session
// writes and reads a row. Prints the session's cipher, user and database, or the error's class and code.
const tenantScript = String.raw`
import json, os, sys, warnings
warnings.simplefilter("ignore")
from oslo_config import cfg
from oslo_db import options
from oslo_db.sqlalchemy import engines
import sqlalchemy as sa
conf = cfg.ConfigOpts()
options.set_defaults(conf)
conf(args=["--config-dir", sys.argv[1]], project="tenant", default_config_files=[])
try:
    engine = engines.create_engine(conf.database.connection, max_retries=0)
    with engine.begin() as c:
        c.execute(sa.text("CREATE TABLE IF NOT EXISTS tenant_rows (id INT PRIMARY KEY, v VARCHAR(20))"))
        c.execute(sa.text("REPLACE INTO tenant_rows VALUES (1, 'written')"))
        row = c.execute(sa.text("SELECT v FROM tenant_rows WHERE id = 1")).scalar()
        cipher = c.execute(sa.text("SHOW SESSION STATUS LIKE 'Ssl_cipher'")).fetchone()[1]
        who = c.execute(sa.text("SELECT CURRENT_USER(), DATABASE()")).fetchone()
    print(json.dumps({"row": row, "cipher": cipher, "user": who[0], "database": who[1]}))
except Exception as e:
    cause = getattr(e, "orig", None)
    code = cause.args[0] if cause is not None and cause.args else None
    print(json.dumps({"error": type(cause or e).__name__, "code": code}))
`;

/** The oslo.config snippet of a connection URL, as the delivered Secret's database.conf holds it. */
const snippet = (connection: string) => `[database]\nconnection = ${connection}\n`;

/** The tenant's service started with `conf` as database.conf in its conf.d: what its session saw. */
async function tenantService(conf: string): Promise<Record<string, unknown>> {
  const confD = mkdtempSync(join(pod, "conf.d-"));
  writeFileSync(join(confD, "database.conf"), conf);
  const { stdout } = await promisify(execFile)(env.OSLO_PYTHON, ["-W", "ignore", "-c", tenantScript, confD], {
    timeout: 60_000,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe("a MariaDBDatabase order over TLS with a client certificate, operator process, real MariaDB", () => {
  it("is delivered with the server's CA, its account REQUIRE X509, by an administrator that REQUIRE X509", async () => {
    await apply(mariaDBDatabaseKind, tenantNs, ORDER, {
      spec: {
        controlPlaneRef: { name: "cp", namespace: cpNs },
        deletionPolicy: "Delete",
        rotation: { interval: "0s", gracePeriod: "5s" },
      },
    });
    await waitReady(1);
    const data = await delivered();
    expect(data["ca.crt"]).toBe(ca);
    expect(data["username"]).toBe(userName(key(), 1));
    expect(await sslType(data["username"] ?? "")).toBe("X509");
    expect(await sslType(admin.user)).toBe("X509");
  });

  it("lets the delivered credentials in over TLS with a client certificate, and refuses them without one", async () => {
    const data = await delivered();
    expect(await logIn(data, "client certificate")).not.toBe("");
    expect(await refusal(data, "CA only")).toBe("ER_ACCESS_DENIED_ERROR");
    expect(await refusal(data, "plain")).toBe("ER_ACCESS_DENIED_ERROR");
  });

  it("lets a tenant in with exactly the delivered URL: oslo.config, oslo.db, SQLAlchemy and PyMySQL", async () => {
    const data = await delivered();
    const connection = data["connection"] ?? "";
    expect(connection).toBe(
      `mysql+pymysql://${data["username"]}:${data["password"]}@${env.MARIADB_HOST}:${env.MARIADB_PORT}/` +
        `${data["database"]}?charset=utf8&ssl_ca=${tenantTlsDir}/ca.crt&ssl_cert=${tenantTlsDir}/tls.crt` +
        `&ssl_key=${tenantTlsDir}/tls.key`,
    );
    expect(data["database.conf"]).toBe(snippet(connection));
    // The pod's mounts: the delivered Secret's ca.crt, and the client certificate the deployment provides
    // (a kubernetes.io/tls Secret's tls.crt and tls.key), where the URL names them.
    mkdirSync(tenantTlsDir, { recursive: true });
    writeFileSync(join(tenantTlsDir, "ca.crt"), data["ca.crt"] ?? "");
    writeFileSync(join(tenantTlsDir, "tls.crt"), clientCert.cert);
    writeFileSync(join(tenantTlsDir, "tls.key"), clientCert.key, { mode: 0o600 });
    const session = await tenantService(data["database.conf"] ?? "");
    expect(session).toEqual({
      row: "written",
      cipher: expect.stringMatching(/.+/),
      user: `${data["username"]}@%`,
      database: data["database"],
    });
    // The certificate is what lets it in: without the URL's ssl_cert and ssl_key the server refuses it
    // (1045, access denied), and without the CA PyMySQL would not verify the server at all.
    const withoutCert = connection.replace(/&ssl_cert=[^&]*&ssl_key=[^&]*$/, "");
    expect(withoutCert).not.toBe(connection);
    expect(await tenantService(snippet(withoutCert))).toEqual({ error: "OperationalError", code: 1045 });
  });

  it("switches a rotation once the successor logs in over TLS with the operator's certificate", async () => {
    await apply(mariaDBDatabaseKind, tenantNs, ORDER, {
      spec: {
        controlPlaneRef: { name: "cp", namespace: cpNs },
        deletionPolicy: "Delete",
        rotation: { interval: "0s", gracePeriod: "5s" },
        passwordGeneration: 2,
      },
    });
    await waitReady(2);
    const data = await delivered();
    expect(data["username"]).toBe(userName(key(), 2));
    expect(await sslType(data["username"] ?? "")).toBe("X509");
    expect(await logIn(data, "client certificate")).not.toBe("");
    expect(data["database.conf"]).toBe(snippet(data["connection"] ?? ""));
    expect(await tenantService(data["database.conf"] ?? "")).toMatchObject({
      row: "written",
      user: `${data["username"]}@%`,
    });
  });

  it("names the missing client certificate when a login of an account that REQUIRE X509 is refused", async () => {
    const data = await delivered();
    const login = {
      host: env.MARIADB_HOST,
      port: env.MARIADB_PORT,
      username: data["username"] ?? "",
      password: data["password"] ?? "",
      resource: data["database"] ?? "",
    };
    const tls = { ...defaultTransport, tls: true };
    const backend = { mariadb: { namespace: cpNs, name: "mariadb" }, endpoint: login, ca };
    expect(await sqlLoginCheck({ ...tls, client: clientCert }, backend, login, 5_000)).toEqual({
      accepted: true,
    });
    const refused = await sqlLoginCheck(tls, backend, login, 5_000);
    expect(refused).toEqual({
      accepted: false,
      reason: `the server refuses a login of user "${login.username}" to database "${login.resource}" (ER_ACCESS_DENIED_ERROR; the operator presents no client certificate, which an account that REQUIRE X509 needs: set mariadb-tls-cert-file and mariadb-tls-key-file)`,
    });
  });

  it("writes no password and no key to its log", () => {
    const logs = operator?.logs() ?? "";
    expect(passwords.size).toBe(3);
    for (const password of passwords) expect(logs).not.toContain(password);
    expect(logs).not.toContain("PRIVATE KEY");
  });

  it("warns at start-up when orders are served over TLS without a client certificate", async () => {
    expect(operator?.logs()).not.toContain("no client certificate is set");
    await operator?.stop();
    operator = await OperatorProcess.start({
      args: [
        "--topology-controller=false",
        "--mariadb-orders",
        "--mariadb-tls",
        `--mariadb-ca-file=${env.MARIADB_CA_FILE}`,
      ],
    });
    expect(operator.logs()).toContain(
      "MariaDB is reached over TLS, so new MariaDBDatabase accounts REQUIRE X509, and no client certificate is set",
    );
  });
});
