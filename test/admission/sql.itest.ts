// The mariadb.osh.openstack.org kinds' admission: every field upstream's mariadb-operator accepts is
// stored as sent (nothing stripped), the seed's defaults (cleanupPolicy Skip, maxUserConnections 0)
// are applied, and what upstream's webhooks refuse is refused by CEL: immutable fields, one password
// source, one TLS requirement, one reference of a Connection, a secretName that never changes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  sqlConnectionKind,
  sqlDatabaseKind,
  sqlGrantKind,
  sqlKinds,
  sqlUserKind,
  type KindRef,
} from "../../src/api/index.ts";
import { freshNamespace, testCluster } from "../../harness/world/kube.ts";
import {
  create,
  expectOutcome,
  installKind,
  outcome,
  read,
  update,
  type Expectation,
} from "../../harness/world/admission.ts";

type Spec = Record<string, unknown>;
const ref = { name: "mariadb" };
const secretRef = { name: "pw", key: "password" };
const base: Record<string, Spec> = {
  Database: { mariaDbRef: ref },
  User: { mariaDbRef: ref, passwordSecretKeyRef: secretRef },
  Grant: { mariaDbRef: ref, privileges: ["SELECT"], username: "u" },
  Connection: { mariaDbRef: ref, username: "u", passwordSecretKeyRef: secretRef },
};

// Every field upstream declares (its current and its earlier ObjectReference/SecretKeySelector form),
// set at once: admitted and stored exactly, defaults aside.
const fullRef = {
  name: "mariadb",
  namespace: "db",
  kind: "MariaDB",
  apiVersion: "k8s.mariadb.com/v1alpha1",
  uid: "0f0e0d0c",
  resourceVersion: "42",
  fieldPath: "spec",
  waitForIt: false,
};
const template = { requeueInterval: "30s", retryInterval: "5s", cleanupPolicy: "Delete" };
const full: Record<string, Spec> = {
  Database: {
    ...template,
    mariaDbRef: fullRef,
    name: "nova_cell0",
    characterSet: "utf8mb4",
    collate: "utf8mb4_bin",
  },
  User: {
    ...template,
    mariaDbRef: fullRef,
    name: "nova",
    host: "10.0.0.%",
    passwordSecretKeyRef: { ...secretRef, optional: false },
    passwordPlugin: {},
    require: { x509: true, ssl: false },
    maxUserConnections: 20,
  },
  Grant: {
    ...template,
    mariaDbRef: fullRef,
    privileges: ["SELECT", "CREATE TEMPORARY TABLES"],
    database: "nova_cell0",
    table: "instances",
    username: "nova",
    host: "%",
    grantOption: true,
  },
  Connection: {
    mariaDbRef: fullRef,
    username: "nova",
    passwordSecretKeyRef: { ...secretRef, optional: false },
    host: "db.example",
    port: 3307,
    serviceName: "mariadb-primary",
    database: "nova_cell0",
    params: { charset: "utf8" },
    secretName: "nova-cell0",
    secretTemplate: {
      key: "DB_CONNECTION",
      format: "mysql://{{ .Username }}:{{ .Password }}@{{ .Host }}:{{ .Port }}/{{ .Database }}{{ .Params }}",
      usernameKey: "username",
      passwordKey: "password",
      hostKey: "host",
      portKey: "port",
      databaseKey: "database",
      metadata: { labels: { a: "b" }, annotations: { c: "d" } },
    },
    healthCheck: { interval: "10s", retryInterval: "3s" },
  },
};

const createCases: [string, KindRef, Spec, Expectation][] = [
  [
    "Database: a cleanupPolicy of neither Skip nor Delete",
    sqlDatabaseKind,
    { ...base["Database"], cleanupPolicy: "Drop" },
    ["cleanupPolicy", "Unsupported value"],
  ],
  [
    "Database: a name longer than 80",
    sqlDatabaseKind,
    { ...base["Database"], name: "d".repeat(81) },
    ["spec.name", "80"],
  ],
  [
    "Database: a requeueInterval that is no duration",
    sqlDatabaseKind,
    { ...base["Database"], requeueInterval: "soon" },
    ["requeueInterval"],
  ],
  ["Database: no mariaDbRef", sqlDatabaseKind, {}, ["mariaDbRef", "Required value"]],
  [
    "User: a password and a password hash",
    sqlUserKind,
    { ...base["User"], passwordHashSecretKeyRef: secretRef },
    ["only one of spec.passwordSecretKeyRef, spec.passwordHashSecretKeyRef"],
  ],
  [
    "User: a password and a plugin",
    sqlUserKind,
    { ...base["User"], passwordPlugin: { pluginNameSecretKeyRef: secretRef } },
    ["only one of"],
  ],
  [
    "User: a plugin argument without a plugin name",
    sqlUserKind,
    { mariaDbRef: ref, passwordPlugin: { pluginArgSecretKeyRef: secretRef } },
    ["pluginArgSecretKeyRef can only be set when"],
  ],
  [
    "User: two TLS requirements",
    sqlUserKind,
    { ...base["User"], require: { ssl: true, x509: true } },
    ["exactly one of ssl, x509, or issuer and subject"],
  ],
  [
    "User: an empty TLS requirement",
    sqlUserKind,
    { ...base["User"], require: {} },
    ["exactly one of ssl, x509, or issuer and subject"],
  ],
  ["User: a host longer than 255", sqlUserKind, { ...base["User"], host: "h".repeat(256) }, ["spec.host"]],
  [
    "User: a secret key reference without key",
    sqlUserKind,
    { mariaDbRef: ref, passwordSecretKeyRef: { name: "pw" } },
    ["key", "Required value"],
  ],
  [
    "Grant: no privileges",
    sqlGrantKind,
    { ...base["Grant"], privileges: [] },
    ["privileges", "at least 1 items"],
  ],
  [
    "Grant: no username",
    sqlGrantKind,
    { mariaDbRef: ref, privileges: ["SELECT"] },
    ["username", "Required value"],
  ],
  [
    "Connection: neither mariaDbRef nor maxScaleRef",
    sqlConnectionKind,
    { username: "u", passwordSecretKeyRef: secretRef },
    ["spec.mariaDbRef or spec.maxScaleRef must be set"],
  ],
  [
    "Connection: both mariaDbRef and maxScaleRef",
    sqlConnectionKind,
    { ...base["Connection"], maxScaleRef: { name: "mxs" } },
    ["cannot both be set"],
  ],
  [
    "Connection: no credentials",
    sqlConnectionKind,
    { mariaDbRef: ref, username: "u" },
    ["spec.passwordSecretKeyRef or spec.tlsClientCertSecretRef must be set"],
  ],
  [
    "Connection: a health check interval that is no duration",
    sqlConnectionKind,
    { ...base["Connection"], healthCheck: { interval: "1 minute" } },
    ["healthCheck.interval"],
  ],
  [
    "Connection: a client certificate in place of a password",
    sqlConnectionKind,
    { mariaDbRef: ref, username: "u", tlsClientCertSecretRef: { name: "tls" } },
    "admitted",
  ],
  ...["mariadb.openstack.svc", "10.0.0.1", "fd00::1", "[fd00::1]"].map(
    (host): [string, KindRef, Spec, Expectation] => [
      `Connection: the host ${host}`,
      sqlConnectionKind,
      { ...base["Connection"], host },
      "admitted",
    ],
  ),
  // The URL and the oslo.config snippet carry the host as it is: '$' is oslo.config's interpolation.
  ...["db$x", "a,b", "u@db", "db/x", "db:3306", "db x", "db\n[x]"].map(
    (host): [string, KindRef, Spec, Expectation] => [
      `Connection: the host ${JSON.stringify(host)}`,
      sqlConnectionKind,
      { ...base["Connection"], host },
      ["spec.host"],
    ],
  ),
  [
    "Connection: a serviceName that is no Service's name",
    sqlConnectionKind,
    { ...base["Connection"], serviceName: "maria$db" },
    ["spec.serviceName"],
  ],
];

// [case, kind, change to a created object of `full`'s spec, expectation].
const updateCases: [string, KindRef, (spec: Spec) => void, Expectation][] = [
  ["Database: name", sqlDatabaseKind, (s) => void (s["name"] = "other"), ["spec.name is immutable"]],
  [
    "Database: characterSet",
    sqlDatabaseKind,
    (s) => void (s["characterSet"] = "latin1"),
    ["spec.characterSet is immutable"],
  ],
  [
    "Database: collate",
    sqlDatabaseKind,
    (s) => void (s["collate"] = "latin1_bin"),
    ["spec.collate is immutable"],
  ],
  [
    "Database: mariaDbRef",
    sqlDatabaseKind,
    (s) => void (s["mariaDbRef"] = { name: "other" }),
    ["spec.mariaDbRef is immutable"],
  ],
  [
    "Database: cleanupPolicy may change",
    sqlDatabaseKind,
    (s) => void (s["cleanupPolicy"] = "Skip"),
    "admitted",
  ],
  ["User: name", sqlUserKind, (s) => void delete s["name"], ["spec.name is immutable"]],
  ["User: host", sqlUserKind, (s) => void (s["host"] = "%"), ["spec.host is immutable"]],
  ["User: maxUserConnections may change", sqlUserKind, (s) => void (s["maxUserConnections"] = 5), "admitted"],
  [
    "User: the password Secret may change",
    sqlUserKind,
    (s) => void (s["passwordSecretKeyRef"] = { name: "pw2", key: "p" }),
    "admitted",
  ],
  ["Grant: username", sqlGrantKind, (s) => void (s["username"] = "other"), ["spec.username is immutable"]],
  ["Grant: database", sqlGrantKind, (s) => void (s["database"] = "*"), ["spec.database is immutable"]],
  ["Grant: table", sqlGrantKind, (s) => void (s["table"] = "*"), ["spec.table is immutable"]],
  ["Grant: host", sqlGrantKind, (s) => void (s["host"] = "localhost"), ["spec.host is immutable"]],
  [
    "Grant: grantOption",
    sqlGrantKind,
    (s) => void (s["grantOption"] = false),
    ["spec.grantOption is immutable"],
  ],
  ["Grant: privileges may change", sqlGrantKind, (s) => void (s["privileges"] = ["SELECT"]), "admitted"],
  [
    "Connection: secretName",
    sqlConnectionKind,
    (s) => void (s["secretName"] = "other"),
    ["spec.secretName cannot change once set"],
  ],
  [
    "Connection: secretName removed",
    sqlConnectionKind,
    (s) => void delete s["secretName"],
    ["spec.secretName cannot change once set"],
  ],
  [
    "Connection: the database may change",
    sqlConnectionKind,
    (s) => void (s["database"] = "nova_api"),
    "admitted",
  ],
];

const cluster = testCluster("management");
let ns = "";
let counter = 0;

function object(kind: KindRef, spec: Spec) {
  return { apiVersion: kind.apiVersion, kind: kind.kind, metadata: { name: `o${++counter}` }, spec };
}

beforeAll(async () => {
  for (const kind of sqlKinds) await installKind(cluster, kind);
  ns = await freshNamespace(cluster, "admission-sql");
});

afterAll(async () => {
  await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

describe("mariadb.osh.openstack.org admission", () => {
  it.each(sqlKinds.map((k) => [k.kind, k] as const))(
    "stores every upstream field of a %s as sent",
    async (_, kind) => {
      const body = object(kind, full[kind.kind] ?? {});
      expect(await outcome(create(cluster, kind, ns, body))).toBe("admitted");
      expect((await read(cluster, kind, ns, body.metadata.name)).spec).toEqual(full[kind.kind]);
    },
  );

  it("applies the seed's defaults and upstream's", async () => {
    const stored = async (kind: KindRef) => {
      const body = object(kind, base[kind.kind] ?? {});
      await create(cluster, kind, ns, body);
      return (await read(cluster, kind, ns, body.metadata.name)).spec;
    };
    const waitRef = { name: "mariadb", waitForIt: true };
    expect(await stored(sqlDatabaseKind)).toEqual({
      mariaDbRef: waitRef,
      characterSet: "utf8",
      collate: "utf8_general_ci",
      cleanupPolicy: "Skip",
    });
    expect(await stored(sqlUserKind)).toEqual({
      mariaDbRef: waitRef,
      passwordSecretKeyRef: secretRef,
      maxUserConnections: 0,
      cleanupPolicy: "Skip",
    });
    expect(await stored(sqlGrantKind)).toEqual({
      mariaDbRef: waitRef,
      privileges: ["SELECT"],
      username: "u",
      database: "*",
      table: "*",
      grantOption: false,
      cleanupPolicy: "Skip",
    });
    expect(await stored(sqlConnectionKind)).toEqual({
      mariaDbRef: waitRef,
      username: "u",
      passwordSecretKeyRef: secretRef,
    });
  });

  it.each(createCases)("on create, %s", async (_, kind, spec, expected) => {
    expectOutcome(await outcome(create(cluster, kind, ns, object(kind, spec))), expected);
  });

  it.each(updateCases)("on update, %s", async (_, kind, change, expected) => {
    const body = object(kind, full[kind.kind] ?? {});
    await create(cluster, kind, ns, body);
    expectOutcome(await outcome(update(cluster, kind, ns, body.metadata.name, change)), expected);
  });
});
