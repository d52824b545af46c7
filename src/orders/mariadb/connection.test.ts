import { describe, expect, it } from "vitest";
import { connectionUrl, deliveredData, tlsParams } from "./connection.ts";

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
    ]);
    expect(Object.keys(deliveredData({ ...login, ca: "PEM" }))).toContain("ca.crt");
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
