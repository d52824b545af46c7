// The delivered keys of a MariaDBDatabase: the parts of the login and `connection`, the
// `mysql+pymysql://<user>:<password>@<host>:<port>/<database>?charset=utf8` URI that oslo.db reads, with
// userinfo and database escaped as every leg's URL is (../core/url.ts). With TLS the server's CA follows
// as ca.crt.
import type { Endpoint } from "../core/endpoint.ts";
import { escapeUserinfo, urlHost } from "../core/url.ts";
import { CA_KEY } from "./conditions.ts";

export interface DatabaseLogin {
  endpoint: Endpoint;
  database: string;
  username: string;
  password: string;
  ca?: string | undefined;
}

export function connectionUrl(l: DatabaseLogin): string {
  const userinfo = `${escapeUserinfo(l.username)}:${escapeUserinfo(l.password)}`;
  return `mysql+pymysql://${userinfo}@${urlHost(l.endpoint.host)}:${l.endpoint.port}/${escapeUserinfo(l.database)}?charset=utf8`;
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
