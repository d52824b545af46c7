import { describe, expect, it } from "vitest";
import { connectionUrl, deliveredData } from "./connection.ts";

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
});
