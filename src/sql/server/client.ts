// The one way the SQL controller talks to MariaDB: a small mysql2 pool logged in as the
// administrator, and single logins as another account (a Connection's check). Statements without
// parameters carry only quoted names and hashes (src/mariadb/sql-text.ts); lookups are prepared statements.
// The driver is loaded on the first statement: an operator without MariaDB never holds it in memory.
//
// Every statement has a deadline, on both ends: the client gives up after `statementTimeoutMs` (mysql2
// then drops the connection, and its late answer with it), and the server is told the same through the
// session's lock_wait_timeout and innodb_lock_wait_timeout, so a DROP waiting on another session's
// metadata lock gives up there too instead of holding one of the pool's connections for a day.
import type { ConnectionOptions, Pool } from "mysql2/promise";
import { openFence, type WriteFence } from "../../runtime/lease-fence.ts";

export interface ServerSettings {
  host: string;
  port: number;
  username: string;
  password: string;
  /** Connect over TLS; `ca` (PEM) is then trusted instead of the system's CAs when given. */
  tls: boolean;
  ca?: string | undefined;
  /** Deadline of one connection attempt. */
  connectTimeoutMs: number;
  /** Deadline of one statement (default 30 s). */
  statementTimeoutMs?: number;
}

/** Connections of the administrator's pool: one held by a slow statement leaves the others working. */
const POOL_SIZE = 4;

export interface SqlSession {
  /** A statement without parameters (DDL, GRANT, REVOKE). */
  run(sql: string): Promise<void>;
  /** A prepared SELECT with its parameters; the rows as objects. */
  select<T>(sql: string, params: (string | number)[]): Promise<T[]>;
}

export interface SqlServer extends SqlSession {
  /** Whether `username` with `password` can log in (to `database`, when given); a refusal throws. */
  login(username: string, password: string, database?: string): Promise<void>;
  close(): Promise<void>;
}

const driver = async () => (await import("mysql2/promise")).default;

function tlsOptions(settings: ServerSettings): ConnectionOptions["ssl"] {
  if (!settings.tls) return undefined;
  return settings.ca ? { ca: settings.ca, rejectUnauthorized: true } : { rejectUnauthorized: true };
}

/**
 * `fence` is asked right before each statement without parameters (the DDL, GRANT and REVOKE: every
 * write) goes out; lookups and logins are reads.
 */
export function connectServer(settings: ServerSettings, fence: WriteFence = openFence): SqlServer {
  const common = {
    host: settings.host,
    port: settings.port,
    ssl: tlsOptions(settings),
    connectTimeout: settings.connectTimeoutMs,
    charset: "utf8mb4_general_ci",
    multipleStatements: false,
    supportBigNumbers: true,
  } satisfies ConnectionOptions;
  const timeout = settings.statementTimeoutMs ?? 30_000;
  // Whole seconds, at least one: what the server's lock waits take.
  const lockWaitSeconds = Math.max(1, Math.ceil(timeout / 1000));
  let pool: Promise<Pool> | undefined;
  const pooled = () =>
    (pool ??= driver().then((mysql) => {
      const created = mysql.createPool({
        ...common,
        user: settings.username,
        password: settings.password,
        connectionLimit: POOL_SIZE,
        maxIdle: 1,
        idleTimeout: 60_000,
      });
      // The callback pool's event: each new connection gets the lock waits before its first statement
      // (mysql2 queues a connection's statements in order).
      created.pool.on("connection", (connection) => {
        connection.query(
          `SET SESSION lock_wait_timeout = ${lockWaitSeconds}, innodb_lock_wait_timeout = ${lockWaitSeconds}`,
        );
      });
      return created;
    }));
  return {
    async run(sql) {
      const session = await pooled();
      // The statement's first words only: a password hash never reaches a log.
      const what = sql.split(/\s+/).slice(0, 2).join(" ");
      fence.check(`the statement ${what} on MariaDB`);
      await session.query({ sql, timeout });
    },
    async select<T>(sql: string, params: (string | number)[]) {
      const [rows] = await (await pooled()).execute({ sql, timeout }, params);
      return rows as T[];
    },
    async login(username, password, database) {
      const connection = await (
        await driver()
      ).createConnection({
        ...common,
        user: username,
        password,
        ...(database ? { database } : {}),
      });
      await connection.end();
    },
    async close() {
      if (pool) await (await pool).end();
    },
  };
}
