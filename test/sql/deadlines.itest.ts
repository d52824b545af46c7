// Every statement has a deadline, against the real MariaDB: a DROP DATABASE that waits on another
// session's metadata lock gives up within it (the server's lock wait, or the client's timeout), is a
// transient failure, and does not hold up the other statements of the pool meanwhile.
import mysql from "mysql2/promise";
import { afterAll, expect, it } from "vitest";
import { connectServer, sqlFailure } from "../../src/sql/statements/index.ts";
import { env, unique } from "../../harness/world/sql.ts";

const server = connectServer({
  host: env.MARIADB_HOST,
  port: env.MARIADB_PORT,
  username: env.MARIADB_ADMIN_USERNAME,
  password: env.MARIADB_ADMIN_PASSWORD,
  transport: { tls: false, connectTimeoutMs: 5_000, statementTimeoutMs: 2_000 },
});
const locked = unique("deadline").replaceAll("-", "_");
const other = unique("alongside").replaceAll("-", "_");
let holder: mysql.Connection | undefined;

afterAll(async () => {
  await holder?.rollback().catch(() => undefined);
  await holder?.end().catch(() => undefined);
  for (const db of [locked, other])
    await server.run(`DROP DATABASE IF EXISTS \`${db}\``).catch(() => undefined);
  await server.close();
});

it("gives up a statement stuck on a metadata lock within its deadline, and the others go on", async () => {
  await server.run(`CREATE DATABASE \`${locked}\``);
  await server.run(`CREATE TABLE \`${locked}\`.t (id INT PRIMARY KEY)`);
  holder = await mysql.createConnection({
    host: env.MARIADB_HOST,
    port: env.MARIADB_PORT,
    user: env.MARIADB_ADMIN_USERNAME,
    password: env.MARIADB_ADMIN_PASSWORD,
  });
  // An open transaction that read the table holds its metadata lock until it ends.
  await holder.beginTransaction();
  await holder.query(`SELECT * FROM \`${locked}\`.t`);

  const started = Date.now();
  const drop = server.run(`DROP DATABASE \`${locked}\``).then(
    () => undefined,
    (error: unknown) => error,
  );
  // While the DROP waits, the pool's other connections serve other statements.
  await server.run(`CREATE DATABASE \`${other}\``);
  const rows = await server.select<{ name: string }>(
    "SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
    [other],
  );
  expect(rows).toEqual([{ name: other }]);
  expect(Date.now() - started).toBeLessThan(1_500);

  const error = await drop;
  const took = Date.now() - started;
  expect(error).toBeDefined();
  expect(took).toBeGreaterThanOrEqual(1_000);
  expect(took).toBeLessThan(6_000);
  expect(sqlFailure(error, [])).toMatchObject({ kind: "unreachable" });
  expect(sqlFailure(error, [])?.message).toMatch(/Lock wait timeout|timeout/i);

  // Once the lock is gone the same statement goes through.
  await holder.commit();
  await server.run(`DROP DATABASE \`${locked}\``);
});
