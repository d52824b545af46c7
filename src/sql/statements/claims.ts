// The server-side marks of a claim (src/api/sql-claim.ts), which arbitrate between objects racing for
// one name: a schema carries its claim in its comment, written by the CREATE DATABASE that made it (a
// plain CREATE: the loser of a race gets "exists" and reads the winner's mark); an account has no
// comment in MariaDB, so the controller's catalogue table holds one row per account it created, keyed
// by the account, inserted before the CREATE USER (the loser of a race gets a duplicate key).
import { CATALOGUE_SCHEMA } from "../../api/sql-claim.ts";
import { InvalidSqlValue, quoteIdentifier } from "../../mariadb/sql-text.ts";
import type { SqlSession } from "./client.ts";

/** Something of the object's name exists on the server under another claim, or none: left alone. */
export class NotOwnedOnServer extends Error {
  override name = "NotOwnedOnServer";
}

const MARK_PREFIX = "vhost-broker claim ";
const claimText = /^[A-Za-z0-9 ./:_-]{1,512}$/;

/** A claim as a string literal; only characters no sql_mode reads differently inside quotes. */
export function claimLiteral(claim: string): string {
  if (!claimText.test(claim)) {
    throw new InvalidSqlValue("a claim holds letters, digits, spaces and . / : _ - only, at most 512");
  }
  return `'${claim}'`;
}

/** The comment a schema made under `claim` carries. */
export const schemaMark = (claim: string): string => `${MARK_PREFIX}${claim}`;

/** The claim a schema comment records; undefined for a comment this controller did not write. */
export function claimOfComment(comment: string): string | undefined {
  return comment.startsWith(MARK_PREFIX) ? comment.slice(MARK_PREFIX.length) : undefined;
}

const catalogue = `${quoteIdentifier(CATALOGUE_SCHEMA)}.${quoteIdentifier("account_claims")}`;
const prepared = new WeakSet<SqlSession>();

async function ensureCatalogue(session: SqlSession): Promise<void> {
  if (prepared.has(session)) return;
  await session.run(
    `CREATE DATABASE IF NOT EXISTS ${quoteIdentifier(CATALOGUE_SCHEMA)} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin COMMENT 'vhost-broker: the accounts its SQL controller created'`,
  );
  await session.run(
    `CREATE TABLE IF NOT EXISTS ${catalogue} (user VARCHAR(80) NOT NULL, host VARCHAR(255) NOT NULL, claim VARCHAR(600) NOT NULL, PRIMARY KEY (user, host)) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`,
  );
  prepared.add(session);
}

/** The claim recorded for the account; undefined when the controller never created it under one. */
export async function accountClaim(
  session: SqlSession,
  user: string,
  host: string,
): Promise<string | undefined> {
  const [row] = await session
    .select<{ claim: string }>(`SELECT claim FROM ${catalogue} WHERE user = ? AND host = ?`, [user, host])
    .catch((error: unknown) => {
      // ER_BAD_DB_ERROR, ER_NO_SUCH_TABLE: no catalogue yet, so no account was claimed.
      const errno = (error as { errno?: unknown }).errno;
      if (errno === 1049 || errno === 1146) return [];
      throw error;
    });
  return row?.claim;
}

/** Records the account under `claim`; false when another row (another claim's) got there first. */
export async function recordAccountClaim(
  session: SqlSession,
  user: string,
  host: string,
  claim: string,
): Promise<boolean> {
  await ensureCatalogue(session);
  try {
    await session.run(
      `INSERT INTO ${catalogue} (user, host, claim) VALUES (${accountPart(user)}, ${accountPart(host)}, ${claimLiteral(claim)})`,
    );
    return true;
  } catch (error) {
    const errno = (error as { errno?: unknown }).errno;
    if (errno === 1062) return false; // ER_DUP_ENTRY
    if (errno === 1049 || errno === 1146) prepared.delete(session); // dropped by hand: made again
    throw error;
  }
}

export async function forgetAccountClaim(
  session: SqlSession,
  user: string,
  host: string,
  claim: string,
): Promise<void> {
  if ((await accountClaim(session, user, host)) === undefined) return;
  await session.run(
    `DELETE FROM ${catalogue} WHERE user = ${accountPart(user)} AND host = ${accountPart(host)} AND claim = ${claimLiteral(claim)}`,
  );
}

// Account names and hosts as literals: the same narrow alphabet as a claim, plus '%'. The order's
// accounts and '%' always fit it; any other account is never recorded.
function accountPart(text: string): string {
  if (!/^[A-Za-z0-9._%-]{1,255}$/.test(text)) {
    throw new InvalidSqlValue("a claimed account's name and host hold letters, digits and . _ % - only");
  }
  return `'${text}'`;
}
