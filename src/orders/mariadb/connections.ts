// Who still uses a database account: the sessions `information_schema.PROCESSLIST` lists for its user,
// asked as the ControlPlane's MariaDB administrator (administrator.ts). Reasons name the user and the
// driver's error code, never a credential.
import { z } from "zod";
import type { MariaDBTransport } from "../../mariadb/client.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import type { ConnectionCount } from "../core/connections.ts";
import { asAdministrator } from "./administrator.ts";
import type { ManagedDatabase } from "./backend-gates.ts";

const CountRows = z.array(z.object({ sessions: z.coerce.number().int().nonnegative() })).length(1);

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

const unknown = (reason: string): ConnectionCount => ({ known: false, reason });
