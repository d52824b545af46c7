// A MariaDB server's administrator as a ControlPlane's credentials Secret holds it
// (spec.infrastructure.database.secretRef): host, port, username, password and, with TLS, ca.crt. One
// parsing for the MariaDBDatabase order leg and the SQL controller alike. The password is returned to
// log in with, never quoted in a message.
import { isIP } from "node:net";
import { parsePort } from "../runtime/base/port-number.ts";

const hostName = /^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;

/**
 * Whether `host` is a host name or an IP address: the delivered URLs carry it as it is, so a '$', ','
 * '/' or '@' in it would break them for oslo.config and oslo.messaging; such a host is refused.
 */
export function usableHost(host: string): boolean {
  return isIP(host) !== 0 || (host.length <= 253 && hostName.test(host));
}

/** The keys the Secret must carry, each non-empty. */
export const CREDENTIAL_KEYS = ["username", "password", "host", "port"] as const;

export interface ServerCredentials {
  host: string;
  port: number;
  username: string;
  password: string;
  /** The CA that signs the server's certificate (ca.crt), when the Secret carries one. */
  ca?: string | undefined;
}

export type CredentialsRead =
  | { outcome: "ready"; credentials: ServerCredentials }
  | { outcome: "incomplete"; missing: readonly string[] }
  | { outcome: "badPort"; message: string }
  | { outcome: "badHost"; message: string };

/** The Secret's `data` (base64 values, as the API returns them) read as a server's credentials. */
export function parseServerCredentials(data: Record<string, string> | undefined): CredentialsRead {
  const value = (k: string) => Buffer.from(data?.[k] ?? "", "base64").toString("utf8");
  const missing = CREDENTIAL_KEYS.filter((k) => value(k) === "");
  if (missing.length > 0) return { outcome: "incomplete", missing };
  const port = parsePort(value("port"));
  if (!port.ok) return { outcome: "badPort", message: port.message };
  if (!usableHost(value("host"))) {
    return { outcome: "badHost", message: `"${value("host")}" is not a host name or IP address` };
  }
  const ca = value("ca.crt");
  return {
    outcome: "ready",
    credentials: {
      host: value("host"),
      port: port.value,
      username: value("username"),
      password: value("password"),
      ca: ca === "" ? undefined : ca,
    },
  };
}
