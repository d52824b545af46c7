// The check before a switch: a real SQL login as the successor to its database, over the process's one
// transport (src/mariadb/client.ts: TLS when the operator uses it, trusting the credentials Secret's
// ca.crt for this server when it carries one, presenting the operator's client certificate, which an
// account that REQUIRE X509 needs). The reason lands in DatabaseReady's message: built from the user, the
// database and the driver's error code, never from a credential.
import { openConnection, type MariaDBTransport } from "../../mariadb/client.ts";
import type { SwitchCheck } from "../core/generations.ts";
import type { SuccessorLogin } from "../core/kind.ts";
import type { ManagedDatabase } from "./backend-gates.ts";

/** Why a refused login over TLS may be the operator's: it presents no client certificate. */
const NO_CLIENT_CERTIFICATE =
  "the operator presents no client certificate, which an account that REQUIRE X509 needs: set mariadb-tls-cert-file and mariadb-tls-key-file";

export async function sqlLoginCheck(
  transport: MariaDBTransport,
  server: Omit<ManagedDatabase, "secret">,
  login: SuccessorLogin,
  timeoutMs: number,
): Promise<SwitchCheck> {
  try {
    const connection = await openConnection(
      transport,
      {
        host: login.host,
        port: login.port,
        user: login.username,
        password: login.password,
        database: login.resource,
      },
      { serverCa: server.ca, budgetMs: timeoutMs },
    );
    await connection.end();
    return { accepted: true };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why = typeof code === "string" ? code : "the connection failed";
    const hint = transport.tls && !transport.client && code === "ER_ACCESS_DENIED_ERROR";
    return {
      accepted: false,
      reason: `the server refuses a login of user "${login.username}" to database "${login.resource}" (${why}${hint ? `; ${NO_CLIENT_CERTIFICATE}` : ""})`,
    };
  }
}
