// How often a database account logged in: its logins in the server's user statistics, asked as the
// ControlPlane's MariaDB administrator (administrator.ts). Reasons name the user and the driver's error
// code, never a credential.
import { z } from "zod";
import type { MariaDBTransport } from "../../mariadb/client.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import type { LoginCount } from "../core/connections.ts";
import { asAdministrator } from "./administrator.ts";
import type { ManagedDatabase } from "./backend-gates.ts";

const LoginRows = z.array(
  z.object({ userstat: z.coerce.number(), logins: z.coerce.number().int().nonnegative().nullable() }),
);

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
