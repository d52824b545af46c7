// MariaDB accounts that follow an order's naming scheme but that no User of the order declares: left by
// a User whose finalizer was stripped, or by an older snapshot of the children, each with a working
// password. Once per sweep the server's accounts whose name starts with the order's prefix are listed
// (`mysql.user`, as the ControlPlane's administrator, over the process's one transport as the successor's
// login check connects); those named exactly `<prefix><N>` that `stray` says no child declares are
// dropped, each DROP asked of the write fence first. A dropped account's open sessions survive until they
// end; new logins fail. Reasons name the order, the account and the driver's error code, never a
// credential.
import { z } from "zod";
import { lockWaitStatement, type MariaDBTransport } from "../../mariadb/client.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import { openFence, type WriteFence } from "../../runtime/base/write-fence.ts";
import { quoteIdentifier } from "../../mariadb/sql-text.ts";
import { location } from "../core/conditions.ts";
import type { StrayRemoval } from "../core/kind.ts";
import type { OrderKey } from "../core/naming.ts";
import { administrator, openAsAdministrator, type AdministratorSession } from "./administrator.ts";
import { userNamePrefix } from "./naming.ts";
import type { ManagedDatabase } from "./backend-gates.ts";

/** An account on the server, as `mysql.user` lists it. */
export interface Account {
  user: string;
  host: string;
}

const AccountRows = z.array(z.object({ user: z.string(), host: z.string() }));

/** The escape character of the LIKE pattern: named in the statement, so no sql_mode changes it. */
const ESCAPE = "!";

/** A LIKE pattern for the names that start with `prefix`: its `_`, `%` (and `!`) taken literally. */
export function likePrefix(prefix: string): string {
  return `${prefix.replace(/[!_%]/g, (c) => `${ESCAPE}${c}`)}%`;
}

const generationDigits = /^[1-9][0-9]*$/;

/**
 * The accounts among `listed` to drop: named exactly `<prefix><N>` (N a generation, no more after it),
 * and undeclared by `stray`'s word. Any other name, however like the prefix, is never one of them.
 */
export function strayAccounts(
  listed: readonly Account[],
  prefix: string,
  stray: (username: string) => boolean,
): Account[] {
  return listed.filter(
    ({ user }) => user.startsWith(prefix) && generationDigits.test(user.slice(prefix.length)) && stray(user),
  );
}

/** `user`@`host` for DROP USER: both quoted as identifiers; an empty host as the empty string. */
function account(user: string, host: string): string {
  return `${quoteIdentifier(user)}@${host === "" ? "''" : quoteIdentifier(host)}`;
}

/**
 * Drops the server's accounts of `order` (its User children's naming scheme) that `stray` says no child
 * declares. A failure to read the administrator or to list the accounts removes nothing and says why; a
 * failed DROP stops there (the next sweep asks again). `timeoutMs` bounds the connect and each statement;
 * the session's lock waits end with it too, so a DROP that gave up on the client does not go on on the
 * server. A refusal of `fence` throws (FencedWriteError), as the RabbitMQ leg's does.
 */
export async function removeStrayAccounts(
  transport: MariaDBTransport,
  kube: Kube,
  server: ManagedDatabase,
  order: OrderKey,
  stray: (username: string) => boolean,
  timeoutMs: number,
  fence: WriteFence = openFence,
  /** The order's account prefix in its scheme (userNamePrefix). */
  prefix: string = userNamePrefix(order),
): Promise<StrayRemoval> {
  const whose = `order ${order.namespace}/${order.name} on ${location(order.cluster)}`;
  const login = await administrator(kube, server);
  if ("failure" in login) return { removed: [], failure: login.failure };

  // Each statement's deadline: the caller's, within the transport's.
  const timeout = Math.min(timeoutMs, transport.statementTimeoutMs);
  let connection: AdministratorSession | undefined;
  try {
    let strays: Account[];
    try {
      connection = await openAsAdministrator(transport, server, login, timeoutMs);
      const [rows] = await connection.execute({
        sql: `SELECT User AS user, Host AS host FROM mysql.user WHERE User LIKE ? ESCAPE '${ESCAPE}' ORDER BY User, Host`,
        values: [likePrefix(prefix)],
        timeout,
      });
      const parsed = AccountRows.safeParse(rows);
      if (!parsed.success) return { removed: [], failure: `the server listed no accounts of ${whose}` };
      strays = strayAccounts(parsed.data, prefix, stray);
    } catch (error) {
      return { removed: [], failure: `the accounts of ${whose} cannot be listed (${codeOf(error)})` };
    }
    if (strays.length === 0) return { removed: [] };
    return await dropAccounts(connection, strays, { whose, timeout, fence });
  } finally {
    // A session whose statement timed out is already closed by the driver; end() then fails, which is fine.
    await connection?.end().catch(() => connection?.destroy());
  }
}

/** Drops `strays` one by one on the administrator's session, each asked of `fence` first. */
async function dropAccounts(
  connection: AdministratorSession,
  strays: readonly Account[],
  { whose, timeout, fence }: { whose: string; timeout: number; fence: WriteFence },
): Promise<StrayRemoval> {
  const removed: string[] = [];
  const who = (a: Account) => `user "${a.user}"@"${a.host}" of ${whose}`;
  try {
    await connection.query({ sql: lockWaitStatement(timeout), timeout });
  } catch (error) {
    return {
      removed,
      failure: `the session to drop the accounts of ${whose} cannot be prepared (${codeOf(error)})`,
    };
  }
  for (const stray of strays) {
    const sql = `DROP USER IF EXISTS ${account(stray.user, stray.host)}`;
    // Outside the try: a refusal is no answer of the server's.
    fence.check(`the statement DROP USER ${account(stray.user, stray.host)} on MariaDB`);
    try {
      await connection.query({ sql, timeout });
    } catch (error) {
      return { removed, failure: `dropping ${who(stray)} failed (${codeOf(error)})` };
    }
    removed.push(`${stray.user}@${stray.host}`);
  }
  return { removed };
}

/** The driver's error code (ER_…, ECONNREFUSED), never its message, which may quote the statement. */
function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === "string") return code;
  return error instanceof Error ? error.name : "the request failed";
}
