// The one way the SQL controller talks to MariaDB: a small mysql2 pool logged in as the
// administrator, and single logins as another account (a Connection's check). Statements without
// parameters carry only quoted names and hashes (sql-text.ts); lookups are prepared statements.
// The driver is loaded on the first statement: an operator without MariaDB never holds it in memory.
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
}

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
  let pool: Promise<Pool> | undefined;
  const pooled = () =>
    (pool ??= driver().then((mysql) =>
      mysql.createPool({
        ...common,
        user: settings.username,
        password: settings.password,
        connectionLimit: 2,
        maxIdle: 1,
        idleTimeout: 60_000,
      }),
    ));
  return {
    async run(sql) {
      const session = await pooled();
      // The statement's first words only: a password hash never reaches a log.
      fence.check(`the statement ${sql.split(/\s+/).slice(0, 2).join(" ")} on MariaDB`);
      await session.query(sql);
    },
    async select<T>(sql: string, params: (string | number)[]) {
      const [rows] = await (await pooled()).execute(sql, params);
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
