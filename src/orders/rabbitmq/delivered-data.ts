// The oslo.messaging transport URL and the six keys of the delivered Secret. Userinfo and the host are
// escaped as every leg's URL is (../core/url.ts).
//
// The vhost is escaped as one RFC 3986 path segment (pchar): unreserved, '&' '+' '=' and ':' '@' stay,
// everything else, '/' and '?' included, becomes %XX. The AMQP URI spec reads the path as a single
// percent-decoded vhost name, so a '/' inside a vhost must be %2F. Of the sub-delims, '$' (oslo.config's
// interpolation), ',' (as in userinfo) and ';' are encoded too: oslo.messaging parses the URL with
// Python's urlparse, which cuts a ';' and what follows off the path as "params". The vhosts this
// operator creates are `<name>-<8 hex>` (DNS-label characters), for which this escaping changes nothing.
import { escapeUserinfo, percentEncode, unreserved, urlHost } from "../core/url.ts";

/** The delivered keys, in the order status.secretKeys reports them. */
export const DELIVERED_KEYS = ["transport_url", "host", "port", "username", "password", "vhost"] as const;

export type DeliveredKey = (typeof DELIVERED_KEYS)[number];
export type DeliveredData = Record<DeliveredKey, string>;

export { escapeUserinfo, urlHost } from "../core/url.ts";

export interface BrokerCredentials {
  username: string;
  password: string;
  /** The bare host: an IPv6 address without brackets. */
  host: string;
  port: number;
  vhost: string;
}

const vhostKept = new Set(["&", "+", "=", ":", "@"]);

/** Escapes a vhost as one path segment. */
export function escapeVhost(vhost: string): string {
  return percentEncode(vhost, (ch) => unreserved.test(ch) || vhostKept.has(ch));
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
