// The ControlPlane's MariaDB administrator, as the leg's own sessions log in: the credentials Secret the
// server gate read, over the process's one transport as the successor's login check connects. The
// session count, the login count and the stray-account removal ask the server as it. Failures name the
// Secret and the driver's error code, never a credential.
import { openConnection, type MariaDBTransport } from "../../mariadb/client.ts";
import { secretKind } from "../../api/index.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import { apiErrorText } from "../core/errors.ts";
import type { ManagedDatabase } from "./backend-gates.ts";

/** A session on the server as the administrator. */
export type AdministratorSession = Awaited<ReturnType<typeof openConnection>>;

/** The administrator's login from the credentials Secret, or why it cannot be read. */
export async function administrator(
  kube: Kube,
  server: ManagedDatabase,
): Promise<{ user: string; password: string } | { failure: string }> {
  const key = server.secret;
  let data: Record<string, string>;
  try {
    const secret = await kube.get(secretKind, key);
    data = (secret?.["data"] ?? {}) as Record<string, string>;
  } catch (error) {
    return {
      failure: `the credentials Secret ${key.namespace}/${key.name} cannot be read (${apiErrorText(error)})`,
    };
  }
  const value = (k: string) => Buffer.from(data[k] ?? "", "base64").toString("utf8");
  const user = value("username");
  const password = value("password");
  if (!user || !password)
    return { failure: `the credentials Secret ${key.namespace}/${key.name} lacks the administrator` };
  return { user, password };
}

/** Opens a session to the server as the administrator; `timeoutMs` bounds the connect. */
export function openAsAdministrator(
  transport: MariaDBTransport,
  server: ManagedDatabase,
  login: { user: string; password: string },
  timeoutMs: number,
): Promise<AdministratorSession> {
  return openConnection(
    transport,
    { ...server.endpoint, ...login },
    { serverCa: server.ca, budgetMs: timeoutMs },
  );
}

/**
 * One statement as the administrator: its rows, why the administrator could not be read, or the
 * driver's error code (never a credential). `timeoutMs` bounds the connect and the statement together.
 */
export async function asAdministrator(
  transport: MariaDBTransport,
  kube: Kube,
  server: ManagedDatabase,
  timeoutMs: number,
  statement: { sql: string; values: string[] },
): Promise<{ rows: unknown } | { failure: string } | { code: string }> {
  const deadline = Date.now() + timeoutMs;
  const login = await administrator(kube, server);
  if ("failure" in login) return login;
  let connection: AdministratorSession | undefined;
  try {
    connection = await openAsAdministrator(transport, server, login, timeoutMs);
    const [rows] = await connection.execute({
      ...statement,
      timeout: Math.max(1, Math.min(deadline - Date.now(), transport.statementTimeoutMs)),
    });
    return { rows };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { code: typeof code === "string" ? code : "the connection failed" };
  } finally {
    // A session whose query timed out is already closed by the driver; end() then fails, which is fine.
    await connection?.end().catch(() => connection?.destroy());
  }
}
