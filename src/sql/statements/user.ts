// An account: created, then ALTER USER when its password, its connection limit or its TLS requirement
// differs (the rotation path, and the repair of a change made out of band). The password is compared as
// its mysql_native_password hash and sent as it, so no statement text holds it, except to a server that
// validates passwords (password-validation.ts), which is sent the password itself. A claimed object's account
// is recorded in the catalogue before its plain CREATE USER, and an account the catalogue does not
// record under the object's claim is refused, never altered or dropped (claims.ts); an account recorded
// under a claim is refused to an object without one. Otherwise seed 002's CREATE USER IF NOT EXISTS.
import type { SqlSession } from "./client.ts";
import type { ReadBack } from "./database.ts";
import { accountName, passwordLiteral } from "../../mariadb/sql-text.ts";
import { accountClaim, forgetAccountClaim, NotOwnedOnServer, recordAccountClaim } from "./claims.ts";
import {
  describePolicy,
  needsPlainPassword,
  PasswordRefused,
  readPasswordValidation,
} from "./password-validation.ts";

export interface UserState {
  name: string;
  host: string;
  /** The mysql_native_password hash; absent: the account has no password and is locked. */
  passwordHash?: string | undefined;
  /** The password itself, sent only to a server that validates passwords; its hash is `passwordHash`. */
  password?: string | undefined;
  maxUserConnections: number;
  requireX509: boolean;
  /** The object's claim (src/api/sql-claim.ts); absent: none. */
  claim?: string | undefined;
  /** A claimed object may record and take over an existing account no claim records. */
  adoptUnmarked?: boolean | undefined;
}

export interface UserRow {
  hash: string;
  plugin: string;
  maxConnections: number | string;
  sslType: string;
}

function clauses(state: UserState): string {
  const require = state.requireX509 ? "REQUIRE X509" : "REQUIRE NONE";
  return `${require} WITH MAX_USER_CONNECTIONS ${Math.trunc(state.maxUserConnections)}`;
}

// ER_NOT_VALID_PASSWORD: "Your password does not satisfy the current policy requirements".
const NOT_VALID_PASSWORD = 1819;

/**
 * Runs CREATE or ALTER USER with the account's IDENTIFIED clause: the password's hash, or the password
 * itself where the server validates passwords. A refusal by the validation plugins is PasswordRefused,
 * naming the policy.
 */
async function writeAccount(
  session: SqlSession,
  state: UserState,
  statement: (identified: string) => string,
): Promise<void> {
  if (!state.passwordHash) return session.run(statement(""));
  const validation = state.password !== undefined ? await readPasswordValidation(session) : undefined;
  const identified =
    validation && needsPlainPassword(validation)
      ? ` IDENTIFIED BY ${passwordLiteral(state.password ?? "", validation.noBackslashEscapes)}`
      : ` IDENTIFIED BY PASSWORD '${state.passwordHash}'`;
  try {
    await session.run(statement(identified));
  } catch (error) {
    if ((error as { errno?: unknown }).errno !== NOT_VALID_PASSWORD) throw error;
    const policy = describePolicy(validation ?? (await readPasswordValidation(session)));
    throw new PasswordRefused(
      `the server's password validation (${policy}) refused the password of '${state.name}'@'${state.host}'`,
      { cause: error },
    );
  }
}

/** The columns of mysql.user an account is compared by. */
export const USER_COLUMNS =
  "authentication_string AS hash, plugin, max_user_connections AS maxConnections, ssl_type AS sslType";

export async function readBackUser(session: SqlSession, state: UserState): Promise<ReadBack> {
  const [row] = await session.select<UserRow>(
    `SELECT ${USER_COLUMNS} FROM mysql.user WHERE User = ? AND Host = ?`,
    [state.name, state.host],
  );
  return compareUser(row, state);
}

/** The account as the server lists it against the spec (the password by its hash only). */
export function compareUser(row: UserRow | undefined, state: UserState): ReadBack {
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

const notOwned = (account: string, why: string) =>
  new NotOwnedOnServer(`account ${account} exists on the server, ${why}: it is left alone`);

/**
 * Settles the claim before any write to the account: "created" when the account was made here and now
 * (plain CREATE USER after the catalogue row), "ours" to go on. Throws NotOwnedOnServer.
 */
async function settleClaim(
  session: SqlSession,
  state: UserState,
  exists: boolean,
): Promise<"ours" | "created" | "adopted"> {
  const account = accountName(state.name, state.host);
  const shown = `'${state.name}'@'${state.host}'`;
  const recorded = await accountClaim(session, state.name, state.host);
  const wanted = state.claim;
  if (recorded !== undefined) {
    if (recorded === wanted) return "ours";
    throw notOwned(shown, `created for ${recorded}${wanted ? `, not for ${wanted}` : ""}`);
  }
  if (wanted === undefined) return "ours";
  if (exists && !state.adoptUnmarked)
    throw notOwned(shown, `which this controller did not create for ${wanted}`);
  if (!(await recordAccountClaim(session, state.name, state.host, wanted))) {
    const other = (await accountClaim(session, state.name, state.host)) ?? "another object";
    throw notOwned(shown, `created for ${other}, not for ${wanted}`);
  }
  if (exists) return "adopted";
  const lock = state.passwordHash ? "" : " PASSWORD EXPIRE ACCOUNT LOCK";
  try {
    await writeAccount(
      session,
      state,
      (identified) => `CREATE USER ${account}${identified} ${clauses(state)}${lock}`,
    );
  } catch (error) {
    // ER_CANNOT_USER: made by someone else since it was looked up. The row claimed it wrongly.
    if ((error as { errno?: unknown }).errno !== 1396) throw error;
    await forgetAccountClaim(session, state.name, state.host, wanted);
    throw notOwned(shown, `which this controller did not create for ${wanted}`);
  }
  return "created";
}

export async function declareUser(
  session: SqlSession,
  state: UserState,
): Promise<"created" | "altered" | "adopted" | "unchanged"> {
  const account = accountName(state.name, state.host);
  const before = await readBackUser(session, state);
  const claim = await settleClaim(session, state, before.exists);
  if (claim === "created" && (await readBackUser(session, state)).matches) return "created";
  if (before.matches) return claim === "adopted" ? "adopted" : "unchanged";
  if (!before.exists && claim !== "created") {
    const lock = state.passwordHash ? "" : " PASSWORD EXPIRE ACCOUNT LOCK";
    await writeAccount(
      session,
      state,
      (identified) => `CREATE USER IF NOT EXISTS ${account}${identified} ${clauses(state)}${lock}`,
    );
    if ((await readBackUser(session, state)).matches) return "created";
  }
  await writeAccount(session, state, (identified) => `ALTER USER ${account}${identified} ${clauses(state)}`);
  return "altered";
}

/** Whether the account is the object's to alter or drop: recorded under its claim, or (without one) under none. */
export async function ownsAccount(
  session: SqlSession,
  name: string,
  host: string,
  claim?: string,
): Promise<boolean> {
  return (await accountClaim(session, name, host)) === claim;
}

/** Drops the account when it is the object's own (ownsAccount); another's is left. */
export async function dropUser(
  session: SqlSession,
  name: string,
  host: string,
  claim?: string,
): Promise<"dropped" | "notOwned"> {
  if (!(await ownsAccount(session, name, host, claim))) return "notOwned";
  await session.run(`DROP USER IF EXISTS ${accountName(name, host)}`);
  if (claim !== undefined) await forgetAccountClaim(session, name, host, claim);
  return "dropped";
}
