// The delivered keys of a MariaDBDatabase: the parts of the login and `connection`, the
// `mysql+pymysql://<user>:<password>@<host>:<port>/<database>?charset=utf8` URI that oslo.db reads, with
// userinfo and database escaped as every leg's URL is (../core/url.ts: no '$' for oslo.config to expand;
// SQLAlchemy 2 decodes the database as it decodes userinfo). With TLS (mariadb-tls) the accounts are
// REQUIRE X509, so the URI names the files a tenant mounts, as OpenStack-Helm's charts do
// (`ssl_ca=/etc/mysql/certs/ca.crt&ssl_cert=/etc/mysql/certs/tls.crt&ssl_key=/etc/mysql/certs/tls.key`,
// the folder being mariadb-tenant-tls-dir), and the Secret carries the CA trusted for the server as
// ca.crt; the client certificate is the deployment's (docs/tenants.md).
import type { Endpoint } from "../core/endpoint.ts";
import { escapeUserinfo, percentEncode, unreserved, urlHost } from "../core/url.ts";
import { CA_KEY } from "./conditions.ts";

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

/** The delivered Secret's keys (and the OpenBao backup's), in the order status.secretKeys lists them. */
export function deliveredData(l: DatabaseLogin): Record<string, string> {
  return {
    connection: connectionUrl(l),
    host: l.endpoint.host,
    port: String(l.endpoint.port),
    database: l.database,
    username: l.username,
    password: l.password,
    ...(l.ca === undefined ? {} : { [CA_KEY]: l.ca }),
  };
}
