// The check before a switch: a real SQL login as the successor to its database, over TLS with the
// server's CA when the credentials Secret carries one. The reason lands in DatabaseReady's message: built
// from the user, the database and the driver's error code, never from a credential.
import type { SwitchCheck } from "../core/generations.ts";
import type { SuccessorLogin } from "../core/kind.ts";
import type { ManagedDatabase } from "./server-gates.ts";

export async function sqlLoginCheck(
  server: ManagedDatabase,
  login: SuccessorLogin,
  timeoutMs: number,
): Promise<SwitchCheck> {
  try {
    // Loaded here, on the first check: an operator without MariaDB orders never holds the driver.
    const mysql = (await import("mysql2/promise")).default;
    const connection = await mysql.createConnection({
      host: login.host,
      port: login.port,
      user: login.username,
      password: login.password,
      database: login.resource,
      connectTimeout: timeoutMs,
      ssl: server.ca === undefined ? undefined : { ca: server.ca, rejectUnauthorized: true },
    });
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
