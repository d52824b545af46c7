// What a Connection's Secret holds (seed 002): under secretTemplate.key (default database.conf) the
// rendered secretTemplate.format, by default the oslo.config snippet a service reads from its conf.d
// folder; and the single values under the *Key keys that are set. A format takes upstream's
// placeholders ({{ .Username }}, {{ .Password }}, {{ .Host }}, {{ .Port }}, {{ .Database }},
// {{ .Params }}, with Go's {{- and -}} trimming) and the two of seed 002's own controller that
// OpenStack-Helm's charts write into a URL, {{ .UsernameEncoded }} and {{ .PasswordEncoded }}
// (every byte but the unreserved percent-encoded, as Python's quote(safe="")); any other action ("{{"
// not opening one of them) is refused, as a text/template feature the controller does not implement.
//
// The default snippet percent-encodes the user name, password and database, so that the URL carries no
// '$' for oslo.config to expand and no ',' (the CRD holds the host to a host name or address); a format
// of the user's own gets .Username, .Password and .Database as they are, as upstream renders them.
import { byCodeUnits } from "../../runtime/base/code-units.ts";

const unreservedChar = /[A-Za-z0-9\-_.~]/;

/** Every UTF-8 byte but the unreserved characters percent-encoded: Python's urllib.parse.quote(s, safe=""). */
export function quoteAll(text: string): string {
  let out = "";
  for (const ch of text) {
    if (ch.length === 1 && unreservedChar.test(ch)) out += ch;
    else
      for (const byte of Buffer.from(ch, "utf8"))
        out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

export interface ConnectionValues {
  username: string;
  password: string;
  host: string;
  port: number;
  database?: string | undefined;
  params: Record<string, string>;
}

export interface SecretTemplate {
  key?: string | undefined;
  format?: string | undefined;
  usernameKey?: string | undefined;
  passwordKey?: string | undefined;
  hostKey?: string | undefined;
  portKey?: string | undefined;
  databaseKey?: string | undefined;
}

export const defaultSecretKey = "database.conf";

export class FormatError extends Error {
  override name = "FormatError";
}

/** Go's url.Values.Encode: keys sorted, form-encoded, with a leading '?' unless empty. */
export function encodeParams(params: Record<string, string>): string {
  const query = new URLSearchParams(Object.entries(params).sort(([a], [b]) => byCodeUnits(a, b)));
  const text = query.toString();
  return text ? `?${text}` : "";
}

function hostInUrl(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** The oslo.config snippet: a [database] section whose connection is a mysql+pymysql URL. */
export function osloSnippet(values: ConnectionValues): string {
  const user = quoteAll(values.username);
  const password = quoteAll(values.password);
  const database = quoteAll(values.database ?? "");
  const params = encodeParams({ charset: "utf8", ...values.params });
  return `[database]\nconnection = mysql+pymysql://${user}:${password}@${hostInUrl(values.host)}:${values.port}/${database}${params}\n`;
}

const known = ".Username, .Password, .Host, .Port, .Database, .Params, .UsernameEncoded and .PasswordEncoded";
const unknownAction = `spec.secretTemplate.format holds a template action other than ${known}`;

const placeholder = /\{\{(-?)\s*\.([A-Za-z]+)\s*(-?)\}\}/g;

/** Renders `format`; a placeholder other than upstream's six, or a stray "{{", is a FormatError. */
export function renderFormat(format: string, values: ConnectionValues): string {
  const fields: Record<string, string> = {
    Username: values.username,
    Password: values.password,
    Host: values.host,
    Port: String(values.port),
    Database: values.database ?? "",
    Params: encodeParams(values.params),
    UsernameEncoded: quoteAll(values.username),
    PasswordEncoded: quoteAll(values.password),
  };
  let out = "";
  let last = 0;
  let trimNext = false;
  for (const match of format.matchAll(placeholder)) {
    const [whole, trimBefore, name = "", trimAfter] = match;
    let text = format.slice(last, match.index);
    if (trimNext) text = text.trimStart();
    if (trimBefore) text = text.trimEnd();
    if (text.includes("{{")) throw new FormatError(unknownAction);
    const value = fields[name];
    if (value === undefined) {
      throw new FormatError(`spec.secretTemplate.format: unknown placeholder .${name}; known are ${known}`);
    }
    out += text + value;
    last = match.index + whole.length;
    trimNext = trimAfter === "-";
  }
  let rest = format.slice(last);
  if (trimNext) rest = rest.trimStart();
  if (rest.includes("{{")) throw new FormatError(unknownAction);
  return out + rest;
}

/** Every key of the Secret with its text. */
export function secretData(
  template: SecretTemplate | undefined,
  values: ConnectionValues,
): Record<string, string> {
  const data: Record<string, string> = {
    [template?.key || defaultSecretKey]:
      template?.format === undefined ? osloSnippet(values) : renderFormat(template.format, values),
  };
  if (template?.usernameKey) data[template.usernameKey] = values.username;
  if (template?.passwordKey) data[template.passwordKey] = values.password;
  if (template?.hostKey) data[template.hostKey] = values.host;
  if (template?.portKey) data[template.portKey] = String(values.port);
  if (template?.databaseKey && values.database) data[template.databaseKey] = values.database;
  return data;
}
