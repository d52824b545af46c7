// A server's catalogue: every schema, account and privilege, read by five statements however many
// objects the server holds, and looked up in memory by the pure comparisons of database.ts, user.ts and
// grant.ts. The verification of an applied object is answered from it (src/external/snapshot.ts);
// only what it shows as different is read back and written on its own.
import { z } from "zod";
import { grantDatabasePattern } from "../../mariadb/sql-text.ts";
import type { SqlSession } from "./client.ts";
import type { SchemaRow } from "./database.ts";
import { grantee, type GrantState, type PrivilegeRow } from "./grant.ts";
import { USER_COLUMNS, type UserRow } from "./user.ts";

export interface Catalogue {
  /** By schema name. */
  schemata: Map<string, SchemaRow>;
  /** By accountKey. */
  users: Map<string, UserRow>;
  /** By privilegeKey: the rows of one grantee on one level (global, a database pattern, a table). */
  privileges: Map<string, PrivilegeRow[]>;
}

export const accountKey = (user: string, host: string): string => JSON.stringify([user, host]);

/** The level of a grant as information_schema files it: `*` (global), a database pattern, or a table. */
export function privilegeKey(granteeText: string, schema: string, table: string): string {
  return JSON.stringify([granteeText, schema, table]);
}

/** Where a Grant's privileges are filed in the catalogue: a database-level grant under its escaped pattern. */
export function grantKey(state: GrantState): string {
  if (state.database === "*") return privilegeKey(grantee(state), "*", "*");
  if (state.table === "*") return privilegeKey(grantee(state), grantDatabasePattern(state.database), "*");
  return privilegeKey(grantee(state), state.database, state.table);
}

// The rows as the driver returns them; a column the server leaves NULL reads as empty.
const text = z.union([z.string(), z.null()]).transform((v) => v ?? "");
const schemaRow = z.object({ name: z.string(), charset: text, collation: text, comment: text });
const userRow = z.object({
  user: z.string(),
  host: z.string(),
  hash: text,
  plugin: text,
  maxConnections: z.union([z.number(), z.string()]),
  sslType: text,
});
const privilegeRow = z.object({
  grantee: z.string(),
  schema: text,
  table: text,
  privilege: z.string(),
  grantable: z.string(),
});

const privilegeColumns = "GRANTEE AS grantee, PRIVILEGE_TYPE AS privilege, IS_GRANTABLE AS grantable";

export async function readCatalogue(session: SqlSession): Promise<Catalogue> {
  const [schemata, users, global, schemas, tables] = await Promise.all([
    session.select(
      "SELECT SCHEMA_NAME AS name, DEFAULT_CHARACTER_SET_NAME AS charset, DEFAULT_COLLATION_NAME AS collation, SCHEMA_COMMENT AS comment FROM information_schema.SCHEMATA",
      [],
    ),
    session.select(`SELECT User AS user, Host AS host, ${USER_COLUMNS} FROM mysql.user`, []),
    session.select(
      `SELECT ${privilegeColumns}, '*' AS \`schema\`, '*' AS \`table\` FROM information_schema.USER_PRIVILEGES`,
      [],
    ),
    session.select(
      `SELECT ${privilegeColumns}, TABLE_SCHEMA AS \`schema\`, '*' AS \`table\` FROM information_schema.SCHEMA_PRIVILEGES`,
      [],
    ),
    session.select(
      `SELECT ${privilegeColumns}, TABLE_SCHEMA AS \`schema\`, TABLE_NAME AS \`table\` FROM information_schema.TABLE_PRIVILEGES`,
      [],
    ),
  ]);
  const privileges = new Map<string, PrivilegeRow[]>();
  for (const row of z.array(privilegeRow).parse([...global, ...schemas, ...tables])) {
    const key = privilegeKey(row.grantee, row.schema, row.table);
    const rows = privileges.get(key) ?? [];
    rows.push({ privilege: row.privilege, grantable: row.grantable });
    privileges.set(key, rows);
  }
  return {
    schemata: new Map(
      z
        .array(schemaRow)
        .parse(schemata)
        .map(({ name, ...row }) => [name, row]),
    ),
    users: new Map(
      z
        .array(userRow)
        .parse(users)
        .map(({ user, host, ...row }) => [accountKey(user, host), row]),
    ),
    privileges,
  };
}
