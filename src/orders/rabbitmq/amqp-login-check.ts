// The pre-switch check: the successor logs in over AMQP on the order's vhost with the password from its
// Secret, and the connection is closed at once. A topology operator that reported Ready without reaching
// the broker cannot make the order deliver a credential the broker refuses. The reason returned lands in
// VhostReady's message, so it is built from the broker's error class only, never from the credentials.
import type { ChannelModel } from "amqplib";
import { scrub } from "../../runtime/base/redact.ts";
import type { SwitchCheck } from "../core/generations.ts";
import type { SuccessorLogin } from "../core/kind.ts";

export async function amqpLoginCheck(login: SuccessorLogin, timeoutMs: number): Promise<SwitchCheck> {
  const who = `user "${login.username}" on vhost "${login.resource}"`;
  let connection: ChannelModel | undefined;
  try {
    // Loaded on the first check: with the default check (the hash) the client is never needed.
    const amqp = (await import("amqplib")).default;
    connection = await amqp.connect(
      {
        protocol: "amqp",
        hostname: login.host,
        port: login.port,
        username: login.username,
        password: login.password,
        vhost: login.resource,
        heartbeat: 0,
      },
      { timeout: timeoutMs },
    );
    connection.on("error", () => undefined);
    return { accepted: true };
  } catch (error) {
    return {
      accepted: false,
      reason: `the broker refused a login as ${who}: ${loginFailure(error, login.password)}`,
    };
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/** What went wrong, in words that carry no credential. */
export function loginFailure(error: unknown, password: string): string {
  const text = error instanceof Error ? error.message : String(error);
  if (/ACCESS[-_]REFUSED/.test(text)) return "authentication failed (ACCESS_REFUSED)";
  if (/NOT[-_]ALLOWED/.test(text) || /access to vhost/i.test(text))
    return "access to the vhost is refused (NOT_ALLOWED)";
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === "string") return `connection failed (${code})`;
  return scrub(text, [password]).slice(0, 200);
}
