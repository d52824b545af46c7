// A database: CREATE DATABASE IF NOT EXISTS, then ALTER DATABASE when the character set or the
// collation differs from the spec (created by someone else, or changed out of band).
import type { SqlSession } from "./client.ts";
import { charsetName, quoteIdentifier, sameCharsetName } from "../../mariadb/sql-text.ts";

export interface DatabaseState {
  name: string;
  characterSet: string;
  collate: string;
}

export interface ReadBack {
  exists: boolean;
  matches: boolean;
  /** What differs, for the log and the condition; names only, never a secret. */
  differences: string[];
}

interface SchemaRow {
  charset: string;
  collation: string;
}

export async function readBackDatabase(session: SqlSession, state: DatabaseState): Promise<ReadBack> {
  const [row] = await session.select<SchemaRow>(
    "SELECT DEFAULT_CHARACTER_SET_NAME AS charset, DEFAULT_COLLATION_NAME AS collation FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
    [state.name],
  );
  if (!row) return { exists: false, matches: false, differences: ["missing"] };
  const differences = [
    ...(sameCharsetName(row.charset, state.characterSet) ? [] : [`characterSet ${row.charset}`]),
    ...(sameCharsetName(row.collation, state.collate) ? [] : [`collate ${row.collation}`]),
  ];
  return { exists: true, matches: differences.length === 0, differences };
}

/** Creates or repairs the database; what it did, for the condition. */
export async function declareDatabase(
  session: SqlSession,
  state: DatabaseState,
): Promise<"created" | "altered" | "unchanged"> {
  const options = `CHARACTER SET ${charsetName(state.characterSet, "characterSet")} COLLATE ${charsetName(state.collate, "collate")}`;
  const before = await readBackDatabase(session, state);
  if (before.matches) return "unchanged";
  if (!before.exists) {
    await session.run(`CREATE DATABASE IF NOT EXISTS ${quoteIdentifier(state.name)} ${options}`);
    const after = await readBackDatabase(session, state);
    if (after.matches) return "created";
  }
  await session.run(`ALTER DATABASE ${quoteIdentifier(state.name)} ${options}`);
  return "altered";
}

export async function dropDatabase(session: SqlSession, name: string): Promise<void> {
  await session.run(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)}`);
}
