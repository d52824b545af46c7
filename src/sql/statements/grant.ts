// Privileges of an account on *.*, a database or a table: GRANT, which is idempotent, and a read-back
// through information_schema. Grants are additive (seed 002): privileges the account holds beyond the
// spec are reported, never revoked; REVOKE is only sent for a deleted Grant under cleanupPolicy Delete.
import type { SqlSession } from "./client.ts";
import type { ReadBack } from "./database.ts";
import { accountName, grantDatabasePattern, grantTarget } from "../../mariadb/sql-text.ts";

export interface GrantState {
  /** In GRANT's spelling (privilegeName), ALL as ALL PRIVILEGES. */
  privileges: string[];
  database: string;
  table: string;
  username: string;
  host: string;
  grantOption: boolean;
}

export interface GrantReadBack extends ReadBack {
  /** Privileges held on the same level beyond the spec (not revoked: grants are additive). */
  extra: string[];
}

// What ALL PRIVILEGES brings on a database or a table; a global ALL brings these and more.
const databaseLevel = [
  "SELECT",
  "INSERT",
  "UPDATE",
  "DELETE",
  "CREATE",
  "DROP",
  "REFERENCES",
  "INDEX",
  "ALTER",
  "CREATE TEMPORARY TABLES",
  "LOCK TABLES",
  "EXECUTE",
  "CREATE VIEW",
  "SHOW VIEW",
  "CREATE ROUTINE",
  "ALTER ROUTINE",
  "EVENT",
  "TRIGGER",
  "DELETE HISTORY",
];
const tableLevel = [
  "SELECT",
  "INSERT",
  "UPDATE",
  "DELETE",
  "CREATE",
  "DROP",
  "REFERENCES",
  "INDEX",
  "ALTER",
  "CREATE VIEW",
  "SHOW VIEW",
  "TRIGGER",
  "DELETE HISTORY",
];

/** The privileges the spec asks for on its level, ALL PRIVILEGES expanded. */
export function expectedPrivileges(state: GrantState): string[] {
  const all = state.table === "*" ? databaseLevel : tableLevel;
  const named = state.privileges.filter((p) => p !== "ALL PRIVILEGES" && p !== "USAGE");
  return [...new Set(state.privileges.includes("ALL PRIVILEGES") ? [...all, ...named] : named)];
}

/** information_schema's GRANTEE: 'user'@'host', as the server writes it (no escaping). */
export function grantee(state: Pick<GrantState, "username" | "host">): string {
  return `'${state.username}'@'${state.host}'`;
}

export interface PrivilegeRow {
  privilege: string;
  grantable: string;
}

async function heldPrivileges(session: SqlSession, state: GrantState): Promise<PrivilegeRow[]> {
  const columns = "PRIVILEGE_TYPE AS privilege, IS_GRANTABLE AS grantable";
  if (state.database === "*") {
    return session.select(`SELECT ${columns} FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ?`, [
      grantee(state),
    ]);
  }
  if (state.table === "*") {
    return session.select(
      `SELECT ${columns} FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ? AND TABLE_SCHEMA = ?`,
      [grantee(state), grantDatabasePattern(state.database)],
    );
  }
  return session.select(
    `SELECT ${columns} FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE = ? AND TABLE_SCHEMA = ? AND TABLE_NAME = ?`,
    [grantee(state), state.database, state.table],
  );
}

export async function readBackGrant(session: SqlSession, state: GrantState): Promise<GrantReadBack> {
  return compareGrant(await heldPrivileges(session, state), state);
}

/** The privileges the server lists for the account on the Grant's level against the spec. */
export function compareGrant(rows: readonly PrivilegeRow[], state: GrantState): GrantReadBack {
  const held = new Set(rows.map((r) => r.privilege).filter((p) => p !== "USAGE"));
  const expected = expectedPrivileges(state);
  const lacking = expected.filter((p) => !held.has(p));
  const grantable = rows.some((r) => r.grantable === "YES");
  const differences = [
    ...lacking.map((p) => `lacks ${p}`),
    ...(state.grantOption && !grantable ? ["lacks GRANT OPTION"] : []),
  ];
  const extra = state.privileges.includes("ALL PRIVILEGES")
    ? []
    : [...held].filter((p) => !expected.includes(p));
  return { exists: rows.length > 0, matches: differences.length === 0, differences, extra: extra.sort() };
}

function privilegeList(state: GrantState): string {
  return state.privileges.join(", ");
}

export async function declareGrant(session: SqlSession, state: GrantState): Promise<void> {
  const option = state.grantOption ? " WITH GRANT OPTION" : "";
  await session.run(
    `GRANT ${privilegeList(state)} ON ${grantTarget(state.database, state.table)} TO ${accountName(state.username, state.host)}${option}`,
  );
}

/** Two statements: MariaDB refuses ALL PRIVILEGES and GRANT OPTION in one REVOKE with an ON clause. */
export async function revokeGrant(session: SqlSession, state: GrantState): Promise<void> {
  const on = `ON ${grantTarget(state.database, state.table)} FROM ${accountName(state.username, state.host)}`;
  await session.run(`REVOKE ${privilegeList(state)} ${on}`);
  if (state.grantOption) await session.run(`REVOKE GRANT OPTION ${on}`);
}
