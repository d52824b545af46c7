// The delivered keys of a MariaDBDatabase: the parts of the login and `connection`, the
// `mysql+pymysql://<user>:<password>@<host>:<port>/<database>?charset=utf8` URI that oslo.db reads, with
// userinfo and database escaped as every leg's URL is (../core/url.ts: no '$' for oslo.config to expand;
// SQLAlchemy 2 decodes the database as it decodes userinfo). With TLS (mariadb-tls) the accounts are
// REQUIRE X509, so the URI names the files a tenant mounts, as OpenStack-Helm's charts do
// (`ssl_ca=/etc/mysql/certs/ca.crt&ssl_cert=/etc/mysql/certs/tls.crt&ssl_key=/etc/mysql/certs/tls.key`,
// the folder being mariadb-tenant-tls-dir), and the Secret carries the CA trusted for the server as
// ca.crt; the client certificate is the deployment's (docs/tenants.md).
//
// `database.conf` holds the same URI as an oslo.config snippet, `[database]\nconnection = <URI>\n`, the
// convention of seed 002's Connection (../../sql/kinds/connection-secret.ts): a Secret mounted as it
// is into a service's conf.d folder (OpenStack-Helm's pod.etcSources) configures oslo.db, since
// --config-dir reads the *.conf files there and nothing else.
import type { Endpoint } from "../core/endpoint.ts";
import { escapeUserinfo, percentEncode, unreserved, urlHost } from "../core/url.ts";

/** The oslo.config snippet's key: a file oslo.config reads from a conf.d folder (--config-dir: *.conf). */
export const CONF_KEY = "database.conf";
/** The delivered keys, as status.secretKeys lists them; ca.crt follows when the server uses TLS. */
export const DELIVERED_KEYS = [
  "connection",
  "host",
  "port",
  "database",
  "username",
  "password",
  CONF_KEY,
] as const;
export const CA_KEY = "ca.crt";

/** OpenStack-Helm's folder of a pod's MariaDB client TLS files: ca.crt, tls.crt, tls.key. */
export const DEFAULT_TENANT_TLS_DIR = "/etc/mysql/certs";

export interface DatabaseLogin {
  endpoint: Endpoint;
  database: string;
  username: string;
  password: string;
  ca?: string | undefined;
  /** With TLS: the folder the tenant mounts ca.crt, tls.crt and tls.key in, which the URI names. */
  tlsDir?: string | undefined;
}

/** The files of `dir` as PyMySQL's query parameters (SQLAlchemy's ssl_ca, ssl_cert, ssl_key). */
export function tlsParams(dir: string): string {
  const path = (file: string) =>
    percentEncode(`${dir.replace(/\/+$/, "")}/${file}`, (ch) => unreserved.test(ch) || ch === "/");
  return `ssl_ca=${path(CA_KEY)}&ssl_cert=${path("tls.crt")}&ssl_key=${path("tls.key")}`;
}

export function connectionUrl(l: DatabaseLogin): string {
  const userinfo = `${escapeUserinfo(l.username)}:${escapeUserinfo(l.password)}`;
  const tls = l.tlsDir === undefined ? "" : `&${tlsParams(l.tlsDir)}`;
  return `mysql+pymysql://${userinfo}@${urlHost(l.endpoint.host)}:${l.endpoint.port}/${escapeUserinfo(l.database)}?charset=utf8${tls}`;
}

/**
 * The oslo.config snippet of `connection`: its [database] section. oslo.config reads a value on one line
 * (no inline comments; quotes only around the whole value) and expands `$name` in it, `$$` being a literal
 * '$'. The URI percent-encodes '$' wherever this operator writes it (../core/url.ts), so the snippet
 * carries it unchanged; a '$' that ever reached it is written `$$`, which oslo.config reads back as one.
 */
export function osloConfSnippet(connection: string): string {
  return `[database]\nconnection = ${connection.replaceAll("$", () => "$$")}\n`;
}

/** The delivered Secret's keys (and the OpenBao backup's), in the order status.secretKeys lists them. */
export function deliveredData(l: DatabaseLogin): Record<string, string> {
  const connection = connectionUrl(l);
  return {
    connection,
    host: l.endpoint.host,
    port: String(l.endpoint.port),
    database: l.database,
    username: l.username,
    password: l.password,
    [CONF_KEY]: osloConfSnippet(connection),
    ...(l.ca === undefined ? {} : { [CA_KEY]: l.ca }),
  };
}
