// The oslo.messaging transport URL and the six keys of the delivered Secret.
//
// Userinfo is escaped exactly like Go's url.UserPassword, which the original used: consumers that
// compare URLs or parse them with Go keep working.
//
// The vhost is escaped as one RFC 3986 path segment (pchar): unreserved, the sub-delims and ':' '@'
// stay, everything else, '/' and '?' included, becomes %XX. The AMQP URI spec reads the path as a single
// percent-decoded vhost name, so a '/' inside a vhost must be %2F. The vhosts this operator creates are
// `<name>-<8 hex>` (DNS-label characters), for which this escaping changes nothing.

/** The delivered keys, in the order status.secretKeys reports them. */
export const DELIVERED_KEYS = ["transport_url", "host", "port", "username", "password", "vhost"] as const;

export type DeliveredKey = (typeof DELIVERED_KEYS)[number];
export type DeliveredData = Record<DeliveredKey, string>;

export interface BrokerCredentials {
  username: string;
  password: string;
  /** The bare host: an IPv6 address without brackets. */
  host: string;
  port: number;
  vhost: string;
}

const unreserved = /[A-Za-z0-9\-_.~]/;
const subDelims = new Set(["$", "&", "+", ",", ";", "="]);

function percentEncode(text: string, keep: (ch: string) => boolean): string {
  let out = "";
  for (const ch of text) {
    if (ch.length === 1 && ch.charCodeAt(0) < 0x80 && keep(ch)) {
      out += ch;
      continue;
    }
    for (const byte of Buffer.from(ch, "utf8")) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Escapes a user name or password like Go's url.UserPassword. */
export function escapeUserinfo(text: string): string {
  return percentEncode(text, (ch) => unreserved.test(ch) || subDelims.has(ch));
}

/** Escapes a vhost as one path segment. */
export function escapeVhost(vhost: string): string {
  return percentEncode(vhost, (ch) => unreserved.test(ch) || subDelims.has(ch) || ch === ":" || ch === "@");
}

/** The host as a URL carries it: IPv6 in brackets, with a zone's '%' escaped (RFC 6874). */
export function urlHost(host: string): string {
  return host.includes(":") ? `[${host.replaceAll("%", "%25")}]` : host;
}

/** `rabbit://<user>:<password>@<host>:<port>/<vhost>` */
export function transportUrl(c: BrokerCredentials): string {
  return `rabbit://${escapeUserinfo(c.username)}:${escapeUserinfo(c.password)}@${urlHost(c.host)}:${c.port}/${escapeVhost(c.vhost)}`;
}

/** The six keys of the delivered Secret (and of the OpenBao backup). */
export function deliveredData(c: BrokerCredentials): DeliveredData {
  return {
    transport_url: transportUrl(c),
    host: c.host,
    port: String(c.port),
    username: c.username,
    password: c.password,
    vhost: c.vhost,
  };
}
