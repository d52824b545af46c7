// URL pieces every leg's connection URL shares. Userinfo is escaped exactly like Go's url.UserPassword,
// which the original used: consumers that compare URLs or parse them with Go keep working.

export const unreserved = /[A-Za-z0-9\-_.~]/;
export const subDelims = new Set(["$", "&", "+", ",", ";", "="]);

/** Percent-encodes every UTF-8 byte of `text` but the ASCII characters `keep` keeps. */
export function percentEncode(text: string, keep: (ch: string) => boolean): string {
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

/** The host as a URL carries it: IPv6 in brackets, with a zone's '%' escaped (RFC 6874). */
export function urlHost(host: string): string {
  return host.includes(":") ? `[${host.replaceAll("%", "%25")}]` : host;
}
