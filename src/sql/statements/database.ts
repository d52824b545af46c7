// A database: created with its character set, collation and, for a claimed object, the claim's mark in
// its comment; then ALTER DATABASE when the character set or the collation differs from the spec. A
// schema of that name that carries another claim's mark, or (for a claimed object) no mark at all, is
// refused, never altered: see claims.ts. Without a claim, seed 002's take-over of an unmarked schema.
import type { SqlSession } from "./client.ts";
import { charsetName, quoteIdentifier, sameCharsetName } from "../../mariadb/sql-text.ts";
import { claimLiteral, claimOfComment, NotOwnedOnServer, schemaMark } from "./claims.ts";

export interface DatabaseState {
  name: string;
  characterSet: string;
  collate: string;
  /** The object's claim (src/api/sql-claim.ts); absent: none. */
  claim?: string | undefined;
  /** A claimed object may mark and take over an unmarked schema of its name. */
  adoptUnmarked?: boolean | undefined;
}

export interface ReadBack {
  exists: boolean;
  matches: boolean;
  /** What differs, for the log and the condition; names only, never a secret. */
  differences: string[];
}

export interface SchemaRow {
  charset: string;
  collation: string;
  comment: string;
}

async function schemaRow(session: SqlSession, name: string): Promise<SchemaRow | undefined> {
  const [row] = await session.select<SchemaRow>(
    "SELECT DEFAULT_CHARACTER_SET_NAME AS charset, DEFAULT_COLLATION_NAME AS collation, SCHEMA_COMMENT AS comment FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
    [name],
  );
  return row;
}

export async function readBackDatabase(session: SqlSession, state: DatabaseState): Promise<ReadBack> {
  return compareSchema(await schemaRow(session, state.name), state);
}

/** The schema as the server lists it against the spec's character set and collation. */
export function compareSchema(row: SchemaRow | undefined, state: DatabaseState): ReadBack {
  if (!row) return { exists: false, matches: false, differences: ["missing"] };
  const differences = [
    ...(sameCharsetName(row.charset, state.characterSet) ? [] : [`characterSet ${row.charset}`]),
    ...(sameCharsetName(row.collation, state.collate) ? [] : [`collate ${row.collation}`]),
  ];
  return { exists: true, matches: differences.length === 0, differences };
}

/** The schema's claim, read from its comment: undefined when absent, "" when unmarked. */
export async function databaseClaim(session: SqlSession, name: string): Promise<string | undefined> {
  const row = await schemaRow(session, name);
  return row ? (claimOfComment(row.comment ?? "") ?? "") : undefined;
}

/**
 * Whether the object may use the existing schema: throws NotOwnedOnServer when not. An unmarked schema
 * that a claimed object may adopt is marked here, and "adopted" returned.
 */
async function judgeExisting(
  session: SqlSession,
  state: DatabaseState,
  held: string,
): Promise<"ours" | "adopted"> {
  const wanted = state.claim ?? "";
  if (held === wanted) return "ours";
  if (held === "" && state.adoptUnmarked) {
    await session.run(
      `ALTER DATABASE ${quoteIdentifier(state.name)} COMMENT ${claimLiteral(schemaMark(wanted))}`,
    );
    return "adopted";
  }
  const whose = held === "" ? "that this controller did not create" : `created for ${held}`;
  throw new NotOwnedOnServer(
    `database ${state.name} exists on the server, ${whose}${state.claim ? `, not for ${state.claim}` : ""}: it is left alone`,
  );
}

/** Creates or repairs the database; what it did, for the condition. */
export async function declareDatabase(
  session: SqlSession,
  state: DatabaseState,
): Promise<"created" | "altered" | "adopted" | "unchanged"> {
  const options = `CHARACTER SET ${charsetName(state.characterSet, "characterSet")} COLLATE ${charsetName(state.collate, "collate")}`;
  const name = quoteIdentifier(state.name);
  let held = await databaseClaim(session, state.name);
  if (held === undefined) {
    if (state.claim === undefined) {
      await session.run(`CREATE DATABASE IF NOT EXISTS ${name} ${options}`);
      const after = await databaseClaim(session, state.name);
      if (after === "" && (await readBackDatabase(session, state)).matches) return "created";
    } else {
      try {
        await session.run(
          `CREATE DATABASE ${name} ${options} COMMENT ${claimLiteral(schemaMark(state.claim))}`,
        );
        if ((await readBackDatabase(session, state)).matches) return "created";
      } catch (error) {
        if ((error as { errno?: unknown }).errno !== 1007) throw error; // ER_DB_CREATE_EXISTS: raced
      }
    }
    held = (await databaseClaim(session, state.name)) ?? "";
  }
  const judged = await judgeExisting(session, state, held);
  if ((await readBackDatabase(session, state)).matches) return judged === "adopted" ? "adopted" : "unchanged";
  await session.run(`ALTER DATABASE ${name} ${options}`);
  return "altered";
}

/**
 * Drops the database when it is the object's own: created under its claim or, without a claim,
 * carrying no one's mark. Another's is left; what happened, for the log.
 */
export async function dropDatabase(
  session: SqlSession,
  name: string,
  claim?: string,
): Promise<"dropped" | "absent" | "notOwned"> {
  const held = await databaseClaim(session, name);
  if (held === undefined) return "absent";
  if (held !== (claim ?? "")) return "notOwned";
  await session.run(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)}`);
  return "dropped";
}
