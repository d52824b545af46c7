// What a failed statement means for the object that sent it. A server that cannot be reached is
// transient; a missing account, database or table is an object the sweep order or a later pass brings
// (seed 002: retry, not status reading); anything else is the server refusing the statement, which
// names what to fix. mysql2's error carries the statement text in `sql`: it is never passed on.
import { redactString, scrub } from "../../runtime/base/redact.ts";
import { InvalidSqlValue } from "../../mariadb/sql-text.ts";
import { NotOwnedOnServer } from "./claims.ts";
import { PasswordRefused } from "./password-validation.ts";

export type SqlFailureKind = "unreachable" | "missing" | "refused" | "notOwned" | "passwordRefused";

export interface SqlFailure {
  kind: SqlFailureKind;
  /** For a condition or a log line: the server's code and message, every known secret removed. */
  message: string;
}

interface ServerError {
  code?: unknown;
  errno?: unknown;
  sqlMessage?: unknown;
  message?: unknown;
  fatal?: unknown;
}

// ER_PASSWORD_NO_MATCH (no such account), ER_NO_SUCH_TABLE, ER_BAD_DB_ERROR, ER_NONEXISTING_GRANT,
// ER_NONEXISTING_TABLE_GRANT.
const missing = new Set([1133, 1146, 1049, 1141, 1147]);
// ER_CON_COUNT_ERROR, ER_TOO_MANY_USER_CONNECTIONS, ER_SERVER_SHUTDOWN, ER_LOCK_WAIT_TIMEOUT,
// ER_LOCK_DEADLOCK, ER_QUERY_INTERRUPTED, and the admin's own login refused (ER_ACCESS_DENIED_ERROR).
const unreachable = new Set([1040, 1203, 1053, 1205, 1213, 1317, 1045]);

/** undefined when `error` did not come from the server or the network (a bug). */
export function sqlFailure(error: unknown, secrets: readonly string[]): SqlFailure | undefined {
  const clean = (text: string) => redactString(scrub(text, secrets));
  if (error instanceof InvalidSqlValue) return { kind: "refused", message: clean(error.message) };
  if (error instanceof NotThereYet) return { kind: "missing", message: clean(error.message) };
  if (error instanceof NotOwnedOnServer) return { kind: "notOwned", message: clean(error.message) };
  if (error instanceof PasswordRefused) return { kind: "passwordRefused", message: clean(error.message) };
  if (typeof error !== "object" || error === null) return undefined;
  const e = error as ServerError;
  const code = typeof e.code === "string" ? e.code : undefined;
  const errno = typeof e.errno === "number" ? e.errno : undefined;
  if (!code) return undefined;
  const text =
    typeof e.sqlMessage === "string" ? e.sqlMessage : typeof e.message === "string" ? e.message : "";
  const message = clean(`${text} (${code})`);
  if (errno !== undefined && errno > 0 && !e.fatal) {
    if (missing.has(errno)) return { kind: "missing", message };
    if (unreachable.has(errno)) return { kind: "unreachable", message };
    return { kind: "refused", message };
  }
  // Network errors (ECONNREFUSED, ETIMEDOUT, PROTOCOL_CONNECTION_LOST, ...) and fatal ones.
  return { kind: "unreachable", message };
}

/** Something the statement needs is not there yet (an account a Connection logs in as): a wait. */
export class NotThereYet extends Error {
  override name = "NotThereYet";
}
