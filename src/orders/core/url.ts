// URL pieces every leg's connection URL shares. Userinfo is escaped like Go's url.UserPassword, which
// the original used, with two more characters percent-encoded for the programs that read the URLs:
// '$', which oslo.config expands in every option value (in a file and in an OS_<GROUP>__<OPTION>
// environment variable alike: `$name` is another option, `$$` a literal '$'), and ',', which
// oslo.messaging's TransportURL.parse reads as the start of a second host. Both programs decode the
// userinfo (oslo.messaging, SQLAlchemy's make_url), so the encoded URL carries the same values to them,
// and to Go's parser. The names this operator generates hold neither, so their URLs are unchanged.

export const unreserved = /[A-Za-z0-9\-_.~]/;
/** The sub-delims a delivered URL keeps as they are: not '$' (oslo.config) nor ',' (oslo.messaging). */
export const keptSubDelims = new Set(["&", "+", ";", "="]);

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

/** Escapes a user name or password like Go's url.UserPassword, and '$' and ',' besides. */
export function escapeUserinfo(text: string): string {
  return percentEncode(text, (ch) => unreserved.test(ch) || keptSubDelims.has(ch));
}

/** The host as a URL carries it: IPv6 in brackets, with a zone's '%' escaped (RFC 6874). */
export function urlHost(host: string): string {
  return host.includes(":") ? `[${host.replaceAll("%", "%25")}]` : host;
}
