// The MariaDBDatabase successor check against the local MariaDB: a real login as the successor to its
// database is accepted; a wrong password, an account without rights on the database and an unknown
// account are refused, with reasons that name the user and the driver's code and never the password.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultTransport } from "../../src/mariadb/client.ts";
import { sqlLoginCheck } from "../../src/orders/mariadb/successor-check.ts";
import { adminServer, env } from "../../harness/world/sql.ts";

const server = adminServer();
const tag = randomBytes(3).toString("hex");
const database = `succ_${tag}`;
const other = `succ_other_${tag}`;
const user = `succ-${tag}-v2`;
const password = `pw-${randomBytes(12).toString("base64url")}`;
const backend = {
  mariadb: { namespace: "openstack", name: "mariadb" },
  endpoint: { host: env.MARIADB_HOST, port: env.MARIADB_PORT },
};
const login = (over: Partial<{ username: string; password: string; resource: string }> = {}) => ({
  host: env.MARIADB_HOST,
  port: env.MARIADB_PORT,
  resource: database,
  username: user,
  password,
  ...over,
});

beforeAll(async () => {
  await server.run(`CREATE DATABASE \`${database}\``);
  await server.run(`CREATE DATABASE \`${other}\``);
  await server.run(`CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'`);
  await server.run(`GRANT ALL PRIVILEGES ON \`${database}\`.* TO '${user}'@'%'`);
});

afterAll(async () => {
  await server.run(`DROP USER IF EXISTS '${user}'@'%'`).catch(() => undefined);
  for (const db of [database, other])
    await server.run(`DROP DATABASE IF EXISTS \`${db}\``).catch(() => undefined);
  await server.close();
});

describe("the SQL login before a switch", () => {
  it("accepts the successor's login to its database", async () => {
    expect(await sqlLoginCheck(defaultTransport, backend, login(), 5_000)).toEqual({ accepted: true });
  });

  it.each<[string, Partial<{ username: string; password: string; resource: string }>, string]>([
    ["a wrong password", { password: "not-the-password" }, "ER_ACCESS_DENIED_ERROR"],
    ["a database it holds no rights on", { resource: other }, "ER_DBACCESS_DENIED_ERROR"],
    // For an unknown account the server answers with a random plugin switch, so the driver reports one
    // of ER_ACCESS_DENIED_ERROR and ER_ACCESS_DENIED_NO_PASSWORD_ERROR.
    ["an unknown account", { username: `succ-${tag}-v9` }, "ER_ACCESS_DENIED_"],
  ])("refuses %s, naming the code and never the password", async (_what, over, code) => {
    const verdict = await sqlLoginCheck(defaultTransport, backend, login(over), 5_000);
    expect(verdict.accepted).toBe(false);
    const reason = verdict.accepted ? "" : verdict.reason;
    expect(reason).toContain(code);
    expect(reason).toContain(over.username ?? user);
    expect(reason).not.toContain(password);
    expect(reason).not.toContain("not-the-password");
  });
});
