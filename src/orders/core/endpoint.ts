// Parsing of backend addresses: the ControlPlane's published endpoints (`host:port`, IPv6 in
// brackets) and the port of the default-user Secret. A failure carries a message fit for a condition
// (DeliveryError); the endpoint holds no secret, so it is quoted.
import { isIPv6 } from "node:net";
import { parsePort, type Parsed } from "../../runtime/base/port-number.ts";

export interface Endpoint {
  /** The bare host: an IPv6 address without its brackets. */
  host: string;
  port: number;
}

const hostName = /^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;

/** Parses `host:port` or `[ipv6]:port`; `what` names the endpoint in a failure's message. */
export function parseEndpoint(text: string, what = "published messaging endpoint"): Parsed<Endpoint> {
  const fail = (why: string): Parsed<Endpoint> => ({
    ok: false,
    message: `${what} "${text}" is not a valid host:port: ${why}`,
  });
  let host: string;
  let portText: string;
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close < 0) return fail("the IPv6 address has no closing bracket");
    host = text.slice(1, close);
    if (!isIPv6(host)) return fail(`"${host}" in brackets is not an IPv6 address`);
    if (text[close + 1] !== ":") return fail("no port after the bracketed address");
    portText = text.slice(close + 2);
  } else {
    const colon = text.lastIndexOf(":");
    if (colon < 0) return fail("no port");
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (host.includes(":")) return fail("an IPv6 address must be written in brackets, as [address]:port");
    if (host === "") return fail("no host");
    if (host.length > 253 || !hostName.test(host)) return fail(`"${host}" is not a host name or address`);
  }
  if (portText === "") return fail("no port");
  const port = parsePort(portText);
  if (!port.ok) return fail(port.message);
  return { ok: true, value: { host, port: port.value } };
}
