// Who still uses a superseded user, as each backend answers, against the real parts. RabbitMQ: a bus
// stand-in (RabbitmqCluster, default-user Secret, the local management URL in upstream's annotation) on
// the management kube-apiserver; a real AMQP connection as a test user counts 1, then 0 once closed; an
// unknown user counts 0; an unreachable management URL cannot tell, and says so without a password; the
// successor's hash check, which reaches the broker the same way (src/rabbitmq/broker-access.ts), still
// accepts the user's password.
// MariaDB: the credentials Secret on the kube-apiserver, a session held open as a test account counts 1,
// still 1 after DROP USER (open sessions survive it), then 0 once closed.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import amqp, { type ChannelModel } from "amqplib";
import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createManagedBus, installCrds, localBrokerFromEnv } from "../../harness/world/managed-bus.ts";
import type { ConnectionCount } from "../../src/orders/core/connections.ts";
import { mariaDBDatabaseOrder } from "../../src/orders/mariadb/kind.ts";
import { serverConnections } from "../../src/orders/mariadb/connections.ts";
import { serverLogins } from "../../src/orders/mariadb/logins.ts";
import { defaultTransport } from "../../src/mariadb/client.ts";
import { serverGate, type ManagedDatabase } from "../../src/orders/mariadb/backend-gates.ts";
import { brokerConnections } from "../../src/orders/rabbitmq/connections.ts";
import { rabbitMQVhostOrder } from "../../src/orders/rabbitmq/kind.ts";
import { successorCheck } from "../../src/orders/rabbitmq/successor-check.ts";
import { RestKube } from "../../src/runtime/port/rest-kube.ts";
import { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import type { BrokerConnections } from "../../src/rabbitmq/broker-access.ts";
import { apiPath } from "../../src/topology/broker/index.ts";
import { adminServer } from "../../harness/world/sql.ts";
import { admin, clients, env, unique } from "../topology/broker-support.ts";
import { eventually, freshNamespace, testCluster } from "../../harness/world/kube.ts";
import { freePort } from "../../harness/world/ports.ts";

const cluster = testCluster("management");
const kube = new RestKube(new KubeRest(cluster.kubeconfig));
const secrets = [env.RABBITMQ_ADMIN_PASSWORD, env.MARIADB_ADMIN_PASSWORD];
let ns = "";

/** Turns the broker's login records by user on or off (read at every login, no restart). */
const trackLogins = (on: boolean) =>
  execFileSync(env.RABBITMQCTL, ["eval", `application:set_env(rabbit, track_auth_attempt_source, ${on}).`]);

const noSecretIn = (count: ConnectionCount) => {
  const text = JSON.stringify(count);
  for (const secret of secrets) expect(text).not.toContain(secret);
};

beforeAll(async () => {
  await installCrds(cluster.config);
  ns = await freshNamespace(cluster, "connections");
});

afterAll(async () => {
  await clients.close();
  if (ns) await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

describe("a broker user's connections", () => {
  const vhost = unique("conn");
  const user = unique("conn-user");
  const password = `pw-${randomBytes(12).toString("base64url")}`;
  const amqpUrl = new URL(env.RABBITMQ_URL);
  const bus = {
    rabbitmqCluster: { namespace: "", name: "rabbitmq" },
    endpoint: { host: amqpUrl.hostname, port: Number(amqpUrl.port || 5672) },
  };
  const broker: BrokerConnections = { clients, resolve: { domain: "" } };
  const kind = rabbitMQVhostOrder({ broker });

  beforeAll(async () => {
    bus.rabbitmqCluster.namespace = ns;
    const broker = localBrokerFromEnv(env as unknown as NodeJS.ProcessEnv);
    await createManagedBus(cluster.config, ns, broker);
    await createManagedBus(
      cluster.config,
      ns,
      { ...broker, managementUrl: `http://127.0.0.1:${await freePort()}` },
      "unreachable",
    );
    await admin.put(apiPath("vhosts", vhost), {});
    await admin.put(apiPath("users", user), { password, tags: "" });
    await admin.put(apiPath("permissions", vhost, user), { configure: ".*", write: ".*", read: ".*" });
  });

  afterAll(async () => {
    await admin.delete(apiPath("users", user)).catch(() => undefined);
    await admin.delete(apiPath("vhosts", vhost)).catch(() => undefined);
  });

  const count = (username: string) =>
    kind.connectionsOf(kube, { ...bus, name: bus.rabbitmqCluster.name }, username, 5_000);

  it("counts an open AMQP connection of the user, and none once it is closed", async () => {
    expect(await count(user)).toEqual({ known: true, count: 0 });
    const connection: ChannelModel = await amqp.connect(
      {
        protocol: "amqp",
        hostname: bus.endpoint.host,
        port: bus.endpoint.port,
        username: user,
        password,
        vhost,
      },
      { timeout: 5_000 },
    );
    connection.on("error", () => undefined);
    try {
      // The tracking table is written as the connection opens; allow a moment all the same.
      await eventually(
        "the broker to list the connection",
        async () => {
          const now = await count(user);
          return now.known && now.count === 1 ? now : undefined;
        },
        2_000,
        50,
      );
    } finally {
      await connection.close();
    }
    await eventually(
      "the broker to list no connection",
      async () => {
        const now = await count(user);
        return now.known && now.count === 0 ? now : undefined;
      },
      2_000,
      50,
    );
  });

  it("reads the user's logins from the broker's records while they are tracked, and says when they are not", async () => {
    const logins = () => kind.loginsOf?.(kube, { ...bus, name: bus.rabbitmqCluster.name }, user, 5_000);
    // Off: whatever was recorded while it was on stays, frozen; it is read as no records.
    expect(await logins()).toMatchObject({ known: false });
    expect(JSON.stringify(await logins())).toContain("track_auth_attempt_source is off");
    trackLogins(true);
    try {
      const before = await logins();
      expect(before).toMatchObject({ known: true });
      const connection = await amqp.connect(
        {
          protocol: "amqp",
          hostname: bus.endpoint.host,
          port: bus.endpoint.port,
          username: user,
          password,
          vhost,
        },
        { timeout: 5_000 },
      );
      await connection.close();
      const after = await logins();
      expect(after?.known && before?.known ? after.succeeded - before.succeeded : undefined).toBe(1);
    } finally {
      trackLogins(false);
    }
  });

  it("counts no connection of a user the broker does not hold (it answers an empty list)", async () => {
    expect(await brokerConnections(kube, bus, unique("nobody"), 5_000, broker)).toEqual({
      known: true,
      count: 0,
    });
  });

  it("cannot tell when the management API cannot be reached, and names no password", async () => {
    const unreachable = { ...bus, rabbitmqCluster: { namespace: ns, name: "unreachable" } };
    const answer = await brokerConnections(kube, unreachable, user, 2_000, broker);
    expect(answer.known).toBe(false);
    expect(answer.known ? "" : answer.reason).toMatch(
      /user "vb-conn-user-.*" cannot be listed .*\(broker unreachable: .*ECONNREFUSED/,
    );
    noSecretIn(answer);
    expect(JSON.stringify(answer)).not.toContain(password);
  });

  it("reaches the broker as the successor's hash check does, through the same management access", async () => {
    const login = { ...bus.endpoint, resource: vhost, username: user, password };
    const check = successorCheck("hash", broker);
    expect(await check(kube, bus, login, 5_000)).toEqual({ accepted: true });
    expect(await check(kube, bus, { ...login, password: "not-it" }, 5_000)).toEqual({
      accepted: false,
      reason: `the broker holds another password for user "${user}"`,
    });
  });

  it("cannot tell when the RabbitmqCluster is missing", async () => {
    const missing = { ...bus, rabbitmqCluster: { namespace: ns, name: "missing" } };
    const answer = await brokerConnections(kube, missing, user, 2_000, broker);
    expect(answer).toEqual({ known: false, reason: `RabbitmqCluster ${ns}/missing not found` });
  });
});

describe("a database account's sessions", () => {
  const server = adminServer();
  const tag = randomBytes(3).toString("hex");
  const user = `conn-${tag}-v1`;
  const password = `pw-${randomBytes(12).toString("base64url")}`;
  const kind = mariaDBDatabaseOrder();
  let backend: ManagedDatabase & { name: string };

  /** The credentials Secret as the ControlPlane names it, and the backend the server gate makes of it. */
  async function backendWith(secretName: string, port: number): Promise<ManagedDatabase & { name: string }> {
    const stringData = {
      username: env.MARIADB_ADMIN_USERNAME,
      password: env.MARIADB_ADMIN_PASSWORD,
      host: env.MARIADB_HOST,
      port: String(port),
    };
    await cluster.core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: secretName }, stringData },
    });
    const data = Object.fromEntries(
      Object.entries(stringData).map(([k, v]) => [k, Buffer.from(v).toString("base64")]),
    );
    const gate = serverGate({
      declared: { mariadb: { namespace: ns, name: "mariadb" }, secret: { namespace: ns, name: secretName } },
      view: { status: { conditions: [{ type: "Ready", status: "True" }] } },
      secret: { data },
    });
    if (!gate.open) throw new Error("the server gate does not open");
    return { ...gate.value, name: "mariadb" };
  }

  beforeAll(async () => {
    backend = await backendWith("mariadb-admin", env.MARIADB_PORT);
    await server.run(`CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'`);
  });

  afterAll(async () => {
    await server.run(`DROP USER IF EXISTS '${user}'@'%'`).catch(() => undefined);
    await server.close();
  });

  it("counts a session held open, still after DROP USER, and none once it is closed", async () => {
    expect(await kind.connectionsOf(kube, backend, user, 5_000)).toEqual({ known: true, count: 0 });
    const session = await mysql.createConnection({
      host: env.MARIADB_HOST,
      port: env.MARIADB_PORT,
      user,
      password,
    });
    try {
      expect(await kind.connectionsOf(kube, backend, user, 5_000)).toEqual({ known: true, count: 1 });
      await server.run(`DROP USER '${user}'@'%'`);
      await session.query("SELECT 1");
      expect(await kind.connectionsOf(kube, backend, user, 5_000)).toEqual({ known: true, count: 1 });
    } finally {
      await session.end();
    }
    await eventually(
      "the server to list no session",
      async () => {
        const now = await serverConnections(defaultTransport, kube, backend, user, 5_000);
        return now.known && now.count === 0 ? now : undefined;
      },
      2_000,
      50,
    );
  });

  it("reads the account's logins from the user statistics while they are kept, and says when they are not", async () => {
    // An account of its own: the test before this one dropped the describe's.
    const account = `${user}-logins`;
    await server.run(`CREATE USER '${account}'@'%' IDENTIFIED BY '${password}'`);
    const logins = () => serverLogins(defaultTransport, kube, backend, account, 5_000);
    const on = (await server.select<{ on: number }>("SELECT @@userstat AS `on`", []))[0]?.on;
    await server.run("SET GLOBAL userstat = 0");
    try {
      expect(await logins()).toEqual({
        known: false,
        reason: "the server keeps no login records by user (userstat is off)",
      });
      await server.run("SET GLOBAL userstat = 1");
      const before = await logins();
      const session = await mysql.createConnection({
        host: env.MARIADB_HOST,
        port: env.MARIADB_PORT,
        user: account,
        password,
      });
      await session.end();
      const after = await logins();
      expect(before.known && after.known ? after.succeeded - before.succeeded : undefined).toBe(1);
    } finally {
      await server.run(`SET GLOBAL userstat = ${on === 1 ? 1 : 0}`);
      await server.run(`DROP USER IF EXISTS '${account}'@'%'`);
    }
  });

  it("cannot tell when the server cannot be reached, and names no password", async () => {
    const unreachable = await backendWith("mariadb-unreachable", await freePort());
    const answer = await serverConnections(defaultTransport, kube, unreachable, user, 2_000);
    expect(answer).toEqual({
      known: false,
      reason: `the server's sessions of user "${user}" cannot be counted (ECONNREFUSED)`,
    });
    noSecretIn(answer);
  });

  it("cannot tell when the credentials Secret lacks the administrator", async () => {
    const missing = { ...backend, secret: { namespace: ns, name: "no-such-secret" } };
    expect(await serverConnections(defaultTransport, kube, missing, user, 2_000)).toEqual({
      known: false,
      reason: `the credentials Secret ${ns}/no-such-secret lacks the administrator`,
    });
  });
});
