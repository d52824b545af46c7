// An account: CREATE USER IF NOT EXISTS, then ALTER USER when its password, its connection limit or its
// TLS requirement differs (the rotation path, and the repair of a change made out of band). The
// password is sent and compared as its mysql_native_password hash, so no statement text holds it.
import type { SqlSession } from "./client.ts";
import type { ReadBack } from "./database.ts";
import { accountName } from "../../mariadb/sql-text.ts";

export interface UserState {
  name: string;
  host: string;
  /** The mysql_native_password hash; absent: the account has no password and is locked. */
  passwordHash?: string | undefined;
  maxUserConnections: number;
  requireX509: boolean;
}

interface UserRow {
  hash: string;
  plugin: string;
  maxConnections: number | string;
  sslType: string;
}

function clauses(state: UserState): string {
  const require = state.requireX509 ? "REQUIRE X509" : "REQUIRE NONE";
  return `${require} WITH MAX_USER_CONNECTIONS ${Math.trunc(state.maxUserConnections)}`;
}

function identified(state: UserState): string {
  return state.passwordHash ? ` IDENTIFIED BY PASSWORD '${state.passwordHash}'` : "";
}

export async function readBackUser(session: SqlSession, state: UserState): Promise<ReadBack> {
  const [row] = await session.select<UserRow>(
    "SELECT authentication_string AS hash, plugin, max_user_connections AS maxConnections, ssl_type AS sslType FROM mysql.user WHERE User = ? AND Host = ?",
    [state.name, state.host],
  );
  if (!row) return { exists: false, matches: false, differences: ["missing"] };
  const differences: string[] = [];
  if (state.passwordHash && (row.plugin !== "mysql_native_password" || row.hash !== state.passwordHash)) {
    differences.push("password");
  }
  if (Number(row.maxConnections) !== state.maxUserConnections) {
    differences.push(`maxUserConnections ${String(row.maxConnections)}`);
  }
  if ((row.sslType === "X509") !== state.requireX509) differences.push(`require ${row.sslType || "NONE"}`);
  return { exists: true, matches: differences.length === 0, differences };
}

export async function declareUser(
  session: SqlSession,
  state: UserState,
): Promise<"created" | "altered" | "unchanged"> {
  const account = accountName(state.name, state.host);
  const before = await readBackUser(session, state);
  if (before.matches) return "unchanged";
  if (!before.exists) {
    const lock = state.passwordHash ? "" : " PASSWORD EXPIRE ACCOUNT LOCK";
    await session.run(`CREATE USER IF NOT EXISTS ${account}${identified(state)} ${clauses(state)}${lock}`);
    if ((await readBackUser(session, state)).matches) return "created";
  }
  await session.run(`ALTER USER ${account}${identified(state)} ${clauses(state)}`);
  return "altered";
}

export async function dropUser(session: SqlSession, name: string, host: string): Promise<void> {
  await session.run(`DROP USER IF EXISTS ${accountName(name, host)}`);
}
