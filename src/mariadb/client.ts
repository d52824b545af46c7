// The one way any component opens a MariaDB connection: the SQL controller's administrator pool and
// logins (src/sql/statements/client.ts) and the MariaDBDatabase order's own sessions (the successor's login,
// the session count, the stray-account sweep) take their transport from one MariaDBTransport, built once
// from the operator's settings; only the address and the account differ.
//
// The CA rule: a server CA the caller read beside the address (a ControlPlane's credentials Secret's
// ca.crt) is trusted for that server; else the configured CA (mariadb-ca-file); else the system's. TLS
// itself follows the transport alone: a ca.crt in a Secret does not turn it on.
//
// The driver is loaded on the first connection: an operator without MariaDB never holds it in memory.
import type { Connection, ConnectionOptions } from "mysql2/promise";

/** How the process reaches MariaDB, whichever server and account. */
export interface MariaDBTransport {
  /** Connect over TLS, verifying the server's certificate and its name. */
  tls: boolean;
  /** PEM trusted for the server's certificate when the caller read none for that server. */
  ca?: string | undefined;
  /** PEM client certificate and its key, presented over TLS (REQUIRE X509 accounts need one). */
  client?: { cert: string; key: string } | undefined;
  /** Deadline of one connection attempt. */
  connectTimeoutMs: number;
  /** Deadline of one statement; the session's lock waits on the server take it too. */
  statementTimeoutMs: number;
}

/** The settings' defaults: plain connections, 10 s to connect, 30 s a statement. */
export const defaultTransport: MariaDBTransport = {
  tls: false,
  connectTimeoutMs: 10_000,
  statementTimeoutMs: 30_000,
};

/** Where and as whom: what differs between the connections of one transport. */
export interface MariaDBAccount {
  host: string;
  port: number;
  user: string;
  password: string;
  database?: string | undefined;
}

/** The CA trusted for a server: `serverCa` (read beside its address) when given, else the transport's. */
export function trustedCa(transport: MariaDBTransport, serverCa?: string): string | undefined {
  return serverCa ?? transport.ca;
}

/** The driver's TLS options; undefined for a plain connection. Undefined CA = the system's. */
export function tlsOptions(transport: MariaDBTransport, serverCa?: string): ConnectionOptions["ssl"] {
  if (!transport.tls) return undefined;
  const ca = trustedCa(transport, serverCa);
  return {
    rejectUnauthorized: true,
    ...(ca === undefined ? {} : { ca }),
    ...(transport.client ? { cert: transport.client.cert, key: transport.client.key } : {}),
  };
}

/**
 * The driver's options for `account` over `transport`. `budgetMs` shortens the connect deadline for a
 * caller bound by its own (a check before a switch).
 */
export function connectionOptions(
  transport: MariaDBTransport,
  account: MariaDBAccount,
  options: { serverCa?: string | undefined; budgetMs?: number } = {},
): ConnectionOptions {
  return {
    host: account.host,
    port: account.port,
    user: account.user,
    password: account.password,
    ...(account.database ? { database: account.database } : {}),
    ssl: tlsOptions(transport, options.serverCa),
    connectTimeout: Math.min(transport.connectTimeoutMs, options.budgetMs ?? Infinity),
    charset: "utf8mb4_general_ci",
    multipleStatements: false,
    supportBigNumbers: true,
  };
}

/** The statement that bounds a session's lock waits on the server: whole seconds, at least one. */
export function lockWaitStatement(timeoutMs: number): string {
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  return `SET SESSION lock_wait_timeout = ${seconds}, innodb_lock_wait_timeout = ${seconds}`;
}

export const driver = async () => (await import("mysql2/promise")).default;

/** One session as `account` over `transport` (connectionOptions). */
export async function openConnection(
  transport: MariaDBTransport,
  account: MariaDBAccount,
  options: { serverCa?: string | undefined; budgetMs?: number } = {},
): Promise<Connection> {
  return await (await driver()).createConnection(connectionOptions(transport, account, options));
}
