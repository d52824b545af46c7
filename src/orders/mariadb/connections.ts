// Who still uses a database account: the sessions `information_schema.PROCESSLIST` lists for its user,
// and its logins in the server's user statistics, asked as the ControlPlane's MariaDB administrator (the
// credentials Secret the server gate read), over the process's one transport as the successor's login
// check connects. Reasons name the user and the driver's error code, never a credential.
import { z } from "zod";
import { openConnection, type MariaDBTransport } from "../../mariadb/client.ts";
import { secretKind } from "../../api/index.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import type { ConnectionCount, LoginCount } from "../core/connections.ts";
import { apiErrorText } from "../core/errors.ts";
import type { ManagedDatabase } from "./server-gates.ts";

const CountRows = z.array(z.object({ sessions: z.coerce.number().int().nonnegative() })).length(1);
const LoginRows = z.array(
  z.object({ userstat: z.coerce.number(), logins: z.coerce.number().int().nonnegative().nullable() }),
);

/**
 * How many sessions of `username` (any host) the server lists now. In MariaDB a dropped user's open
 * sessions survive (DROP USER succeeds with a warning) while new logins fail, so this count is what a
 * sweep must wait on. Reading other users' sessions needs the PROCESS privilege, which the administrator
 * has; without it the server would list only the administrator's own and the count would read 0.
 * `timeoutMs` bounds the connect and the query together.
 */
export async function serverConnections(
  transport: MariaDBTransport,
  kube: Kube,
  server: ManagedDatabase,
  username: string,
  timeoutMs: number,
): Promise<ConnectionCount> {
  const who = `user "${username}"`;
  const asked = await asAdministrator(transport, kube, server, timeoutMs, {
    sql: "SELECT COUNT(*) AS sessions FROM information_schema.PROCESSLIST WHERE USER = ?",
    values: [username],
  });
  if ("failure" in asked) return unknown(asked.failure);
  if ("code" in asked) return unknown(`the server's sessions of ${who} cannot be counted (${asked.code})`);
  const parsed = CountRows.safeParse(asked.rows);
  if (!parsed.success) return unknown(`the server answered no count of the sessions of ${who}`);
  return { known: true, count: parsed.data[0]?.sessions ?? 0 };
}

/**
 * The connections of `username` (any host) the server counted since it started, from MariaDB's user
 * statistics (`information_schema.USER_STATISTICS`, kept only while the server runs with
 * `userstat = 1`; off by default).
 */
export async function serverLogins(
  transport: MariaDBTransport,
  kube: Kube,
  server: ManagedDatabase,
  username: string,
  timeoutMs: number,
): Promise<LoginCount> {
  const asked = await asAdministrator(transport, kube, server, timeoutMs, {
    sql: "SELECT @@userstat AS userstat, (SELECT SUM(TOTAL_CONNECTIONS) FROM information_schema.USER_STATISTICS WHERE USER = ?) AS logins",
    values: [username],
  });
  const who = `user "${username}"`;
  if ("failure" in asked) return { known: false, reason: asked.failure };
  if ("code" in asked)
    return { known: false, reason: `the server's logins of ${who} cannot be read (${asked.code})` };
  const parsed = LoginRows.safeParse(asked.rows);
  const row = parsed.success ? parsed.data[0] : undefined;
  if (!row) return { known: false, reason: `the server answered no count of the logins of ${who}` };
  if (row.userstat !== 1)
    return { known: false, reason: "the server keeps no login records by user (userstat is off)" };
  return { known: true, succeeded: row.logins ?? 0 };
}

/**
 * One statement as the ControlPlane's MariaDB administrator (the credentials Secret the server gate
 * read), over the process's one transport: its rows, why the administrator could not be read, or the
 * driver's error code (never a credential).
 */
async function asAdministrator(
  transport: MariaDBTransport,
  kube: Kube,
  server: ManagedDatabase,
  timeoutMs: number,
  statement: { sql: string; values: string[] },
): Promise<{ rows: unknown } | { failure: string } | { code: string }> {
  const deadline = Date.now() + timeoutMs;
  const key = server.secret;
  let data: Record<string, string>;
  try {
    const secret = await kube.get(secretKind, key);
    data = (secret?.["data"] ?? {}) as Record<string, string>;
  } catch (error) {
    return {
      failure: `the credentials Secret ${key.namespace}/${key.name} cannot be read (${apiErrorText(error)})`,
    };
  }
  const value = (k: string) => Buffer.from(data[k] ?? "", "base64").toString("utf8");
  const user = value("username");
  const password = value("password");
  if (!user || !password)
    return { failure: `the credentials Secret ${key.namespace}/${key.name} lacks the administrator` };
  let connection: Awaited<ReturnType<typeof openConnection>> | undefined;
  try {
    connection = await openConnection(
      transport,
      { ...server.endpoint, user, password },
      { serverCa: server.ca, budgetMs: timeoutMs },
    );
    const [rows] = await connection.execute({
      ...statement,
      timeout: Math.max(1, Math.min(deadline - Date.now(), transport.statementTimeoutMs)),
    });
    return { rows };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { code: typeof code === "string" ? code : "the connection failed" };
  } finally {
    // A session whose query timed out is already closed by the driver; end() then fails, which is fine.
    await connection?.end().catch(() => connection?.destroy());
  }
}

const unknown = (reason: string): ConnectionCount => ({ known: false, reason });
