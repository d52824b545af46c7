import { describe, expect, it } from "vitest";
import {
  connectionUrl,
  DELIVERED_KEYS,
  deliveredData,
  osloConfSnippet,
  tlsParams,
} from "./delivered-data.ts";

describe("the delivered connection", () => {
  it("is the mysql+pymysql URI oslo.db reads, userinfo escaped as Go's url.UserPassword", () => {
    const login = {
      endpoint: { host: "fd00::1", port: 3306 },
      database: "nova_cell0",
      username: "nova-cell0-13e1aacc-v1",
      password: "p@ss:w/rd",
    };
    expect(connectionUrl(login)).toBe(
      "mysql+pymysql://nova-cell0-13e1aacc-v1:p%40ss%3Aw%2Frd@[fd00::1]:3306/nova_cell0?charset=utf8",
    );
    expect(Object.keys(deliveredData(login))).toEqual([
      "connection",
      "host",
      "port",
      "database",
      "username",
      "password",
      "database.conf",
    ]);
    expect(Object.keys(deliveredData(login))).toEqual([...DELIVERED_KEYS]);
    expect(Object.keys(deliveredData({ ...login, ca: "PEM" }))).toEqual([...DELIVERED_KEYS, "ca.crt"]);
  });

  it("carries database.conf, the oslo.config snippet of exactly the connection, as a Connection does", () => {
    const login = {
      endpoint: { host: "mariadb.openstack.svc", port: 3306 },
      database: "keystone",
      username: "keystone-13e1aacc-v2",
      password: "secret",
    };
    const data = deliveredData(login);
    expect(data["database.conf"]).toBe(
      "[database]\nconnection = mysql+pymysql://keystone-13e1aacc-v2:secret@mariadb.openstack.svc:3306/keystone?charset=utf8\n",
    );
    expect(data["database.conf"]).toBe(`[database]\nconnection = ${data["connection"]}\n`);
    const tls = deliveredData({ ...login, tlsDir: "/etc/mysql/certs", ca: "PEM" });
    expect(tls["database.conf"]).toBe(`[database]\nconnection = ${tls["connection"]}\n`);
    expect(tls["database.conf"]).toContain("&ssl_key=/etc/mysql/certs/tls.key\n");
  });

  it("keeps the snippet one [database] line with no '$' for oslo.config, whatever the values hold", () => {
    const hostile = ["a$b", "$$", "${x}", "a,b", "l\nine", "\r[DEFAULT]", " #;x", "'q'", '"q"'];
    for (const v of hostile) {
      const data = deliveredData({
        endpoint: { host: "fd00::1", port: 3306 },
        database: `db_${v}`,
        username: `u-${v}`,
        password: `p-${v}`,
        tlsDir: `/certs/${v}`,
      });
      const snippet = data["database.conf"] ?? "";
      expect(snippet).toBe(`[database]\nconnection = ${data["connection"]}\n`);
      expect(snippet.split("\n")).toHaveLength(3);
      expect(snippet).not.toMatch(/[$\r]/);
    }
  });

  it("writes a '$' that reached the snippet as '$$', oslo.config's literal '$'", () => {
    expect(osloConfSnippet("mysql+pymysql://u:p$x@db:3306/d$$?charset=utf8")).toBe(
      "[database]\nconnection = mysql+pymysql://u:p$$x@db:3306/d$$$$?charset=utf8\n",
    );
    expect(osloConfSnippet("mysql+pymysql://u:p@db:3306/d")).toBe(
      "[database]\nconnection = mysql+pymysql://u:p@db:3306/d\n",
    );
  });

  it("carries no $ (oslo.config) and no , whatever the database and account hold", () => {
    const url = connectionUrl({
      endpoint: { host: "db", port: 3306 },
      database: "a$b",
      username: "u$,",
      password: "p$$,@:/%#",
    });
    expect(url).toBe("mysql+pymysql://u%24%2C:p%24%24%2C%40%3A%2F%25%23@db:3306/a%24b?charset=utf8");
  });

  it("names the tenant's TLS files under the folder, as OpenStack-Helm mounts them", () => {
    const login = { endpoint: { host: "db", port: 3306 }, database: "d", username: "u", password: "p" };
    expect(connectionUrl({ ...login, tlsDir: "/etc/mysql/certs" })).toBe(
      "mysql+pymysql://u:p@db:3306/d?charset=utf8&ssl_ca=/etc/mysql/certs/ca.crt&ssl_cert=/etc/mysql/certs/tls.crt&ssl_key=/etc/mysql/certs/tls.key",
    );
    expect(tlsParams("/tmp/x/")).toBe("ssl_ca=/tmp/x/ca.crt&ssl_cert=/tmp/x/tls.crt&ssl_key=/tmp/x/tls.key");
  });
});
