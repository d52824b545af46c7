// The one way the SQL controller talks to MariaDB: a small mysql2 pool logged in as the
// administrator, and single logins as another account (a Connection's check), both opened over the
// process's one transport (TLS, CA, client certificate, deadlines: src/mariadb/client.ts). Statements
// without parameters carry only quoted names and hashes (src/mariadb/sql-text.ts); lookups are prepared
// statements. The driver is loaded on the first statement: an operator without MariaDB never holds it.
//
// Every statement has a deadline, on both ends: the client gives up after `statementTimeoutMs` (mysql2
// then drops the connection, and its late answer with it), and the server is told the same through the
// session's lock_wait_timeout and innodb_lock_wait_timeout, so a DROP waiting on another session's
// metadata lock gives up there too instead of holding one of the pool's connections for a day.
import type { Pool } from "mysql2/promise";
import {
  connectionOptions,
  driver,
  lockWaitStatement,
  openConnection,
  type MariaDBTransport,
} from "../../mariadb/client.ts";
import { openFence, type WriteFence } from "../../runtime/base/write-fence.ts";

export interface ServerSettings {
  host: string;
  port: number;
  username: string;
  password: string;
  /** The CA read beside the address (a ControlPlane's credentials Secret's ca.crt); wins over the transport's. */
  ca?: string | undefined;
  /** TLS, CA, client certificate and deadlines: the process's one transport (src/mariadb/client.ts). */
  transport: MariaDBTransport;
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

/**
 * `fence` is asked right before each statement without parameters (the DDL, GRANT and REVOKE: every
 * write) goes out; lookups and logins are reads.
 */
export function connectServer(settings: ServerSettings, fence: WriteFence = openFence): SqlServer {
  const { transport } = settings;
  const at = { host: settings.host, port: settings.port };
  const timeout = transport.statementTimeoutMs;
  let pool: Promise<Pool> | undefined;
  const pooled = () =>
    (pool ??= driver().then((mysql) => {
      const created = mysql.createPool({
        ...connectionOptions(
          transport,
          { ...at, user: settings.username, password: settings.password },
          { serverCa: settings.ca },
        ),
        connectionLimit: POOL_SIZE,
        maxIdle: 1,
        idleTimeout: 60_000,
      });
      // The callback pool's event: each new connection gets the lock waits before its first statement
      // (mysql2 queues a connection's statements in order).
      created.pool.on("connection", (connection) => {
        connection.query(lockWaitStatement(timeout));
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
      const connection = await openConnection(
        transport,
        { ...at, user: username, password, database },
        { serverCa: settings.ca },
      );
      await connection.end();
    },
    async close() {
      if (pool) await (await pool).end();
    },
  };
}
