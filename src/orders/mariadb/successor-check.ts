// The check before a switch: a real SQL login as the successor to its database, over TLS with the
// server's CA when the credentials Secret carries one. The reason lands in DatabaseReady's message: built
// from the user, the database and the driver's error code, never from a credential.
import type { SwitchCheck } from "../core/generations.ts";
import type { SuccessorLogin } from "../core/kind.ts";
import type { Connection } from "mysql2/promise";
import type { ManagedDatabase } from "./server-gates.ts";

/** A session with the server, over TLS with its CA when the credentials Secret carries one. */
export async function connectTo(
  server: Omit<ManagedDatabase, "secret">,
  account: { host: string; port: number; user: string; password: string; database?: string | undefined },
  timeoutMs: number,
): Promise<Connection> {
  // Loaded here, on first use: an operator without MariaDB orders never holds the driver.
  const mysql = (await import("mysql2/promise")).default;
  return await mysql.createConnection({
    ...account,
    connectTimeout: timeoutMs,
    ssl: server.ca === undefined ? undefined : { ca: server.ca, rejectUnauthorized: true },
  });
}

export async function sqlLoginCheck(
  server: Omit<ManagedDatabase, "secret">,
  login: SuccessorLogin,
  timeoutMs: number,
): Promise<SwitchCheck> {
  try {
    const connection = await connectTo(
      server,
      {
        host: login.host,
        port: login.port,
        user: login.username,
        password: login.password,
        database: login.resource,
      },
      timeoutMs,
    );
    await connection.end();
    return { accepted: true };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why = typeof code === "string" ? code : "the connection failed";
    return {
      accepted: false,
      reason: `the server refuses a login of user "${login.username}" to database "${login.resource}" (${why})`,
    };
  }
}
