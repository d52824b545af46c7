// The SQL text the SQL controller and the MariaDB order leg send, built from names a user chose: every identifier and account part
// is quoted with backticks (a backtick doubled), which MariaDB reads the same whatever the session's
// sql_mode (ANSI_QUOTES and NO_BACKSLASH_ESCAPES change string literals, not backticks). Values that
// cannot be quoted that way (a character set, a privilege) are checked against what they may be. A
// password travels as its mysql_native_password hash, which is hexadecimal, except to a server that
// validates passwords (it cannot validate a hash): there as a literal quoted for the session's sql_mode.
// Lookups take their values as parameters of prepared statements.
import { createHash } from "node:crypto";

export class InvalidSqlValue extends Error {
  override name = "InvalidSqlValue";
}

/** An identifier (database, table, user or host name) as MariaDB reads it back verbatim. */
export function quoteIdentifier(name: string): string {
  if (name.length === 0) throw new InvalidSqlValue("an empty name cannot be quoted");
  if (name.includes("\0")) throw new InvalidSqlValue("a name cannot hold a NUL character");
  return `\`${name.replaceAll("`", "``")}\``;
}

/** `user`@`host`: both parts quoted as identifiers, which MariaDB accepts for account names. */
export function accountName(user: string, host: string): string {
  return `${quoteIdentifier(user)}@${quoteIdentifier(host)}`;
}

/**
 * A database name as GRANT matches it: `_` and `%` are wildcards there, so they are escaped with a
 * backslash and the grant covers the named database only (nova_cell0, not novaXcell0).
 */
export function grantDatabasePattern(name: string): string {
  return name.replace(/[\\_%]/g, (c) => `\\${c}`);
}

/** mysql_native_password's stored form of `password`: '*' and SHA1(SHA1(password)) in upper-case hex. */
export function nativePasswordHash(password: string): string {
  const inner = createHash("sha1").update(password, "utf8").digest();
  return `*${createHash("sha1").update(inner).digest("hex").toUpperCase()}`;
}

/**
 * A password as a string literal: a quote doubled, which every sql_mode reads back as one, and a
 * backslash doubled unless NO_BACKSLASH_ESCAPES makes it an ordinary character.
 */
export function passwordLiteral(password: string, noBackslashEscapes: boolean): string {
  if (password.includes("\0")) throw new InvalidSqlValue("a password cannot hold a NUL character");
  const quoted = password.replaceAll("'", "''");
  return `'${noBackslashEscapes ? quoted : quoted.replaceAll("\\", "\\\\")}'`;
}

const nativeHash = /^\*[0-9A-F]{40}$/;

/** A given hash, upper-cased; anything but '*' and 40 hexadecimal digits is refused. */
export function checkedNativeHash(hash: string): string {
  const upper = hash.trim().toUpperCase();
  if (!nativeHash.test(upper)) {
    throw new InvalidSqlValue("a password hash must be '*' followed by 40 hexadecimal digits");
  }
  return upper;
}

/** A character set or collation name: letters, digits and underscores only, as MariaDB names them. */
export function charsetName(name: string, what: string): string {
  if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) {
    throw new InvalidSqlValue(`${what} ${JSON.stringify(name)} is not a character set or collation name`);
  }
  return name.toLowerCase();
}

/** MariaDB 10.6+ reports utf8 as utf8mb3 (old_mode UTF8_IS_UTF8MB3): compare the two as one. */
export function sameCharsetName(a: string, b: string): boolean {
  const norm = (s: string) => s.toLowerCase().replace(/^utf8(?=$|_)/, "utf8mb3");
  return norm(a) === norm(b);
}

// The privileges MariaDB knows, as GRANT spells them (10.5+ names included).
const knownPrivileges = new Set([
  "ALL PRIVILEGES",
  "ALTER",
  "ALTER ROUTINE",
  "BINLOG ADMIN",
  "BINLOG MONITOR",
  "BINLOG REPLAY",
  "CONNECTION ADMIN",
  "CREATE",
  "CREATE ROUTINE",
  "CREATE TABLESPACE",
  "CREATE TEMPORARY TABLES",
  "CREATE USER",
  "CREATE VIEW",
  "DELETE",
  "DELETE HISTORY",
  "DROP",
  "EVENT",
  "EXECUTE",
  "FEDERATED ADMIN",
  "FILE",
  "INDEX",
  "INSERT",
  "LOCK TABLES",
  "PROCESS",
  "READ_ONLY ADMIN",
  "REFERENCES",
  "RELOAD",
  "REPLICATION CLIENT",
  "REPLICATION MASTER ADMIN",
  "REPLICATION SLAVE",
  "REPLICATION SLAVE ADMIN",
  "SELECT",
  "SET USER",
  "SHOW DATABASES",
  "SHOW VIEW",
  "SHUTDOWN",
  "SLAVE MONITOR",
  "SUPER",
  "TRIGGER",
  "UPDATE",
  "USAGE",
]);

/** A privilege in GRANT's spelling: upper case, single spaces, ALL as ALL PRIVILEGES. */
export function privilegeName(text: string): string {
  const name = text.trim().replace(/\s+/g, " ").toUpperCase();
  const canonical = name === "ALL" ? "ALL PRIVILEGES" : name;
  if (!knownPrivileges.has(canonical)) {
    throw new InvalidSqlValue(`${JSON.stringify(text)} is not a MariaDB privilege`);
  }
  return canonical;
}

/** `db`.`table`, `db`.* or *.*, as GRANT and REVOKE name what they act on. */
export function grantTarget(database: string, table: string): string {
  if (database === "*") {
    if (table !== "*")
      throw new InvalidSqlValue("a table needs a database: database '*' takes table '*' only");
    return "*.*";
  }
  // Wildcards apply to a database-level grant only; a table's database is taken literally.
  if (table === "*") return `${quoteIdentifier(grantDatabasePattern(database))}.*`;
  return `${quoteIdentifier(database)}.${quoteIdentifier(table)}`;
}
