import { describe, expect, it } from "vitest";
import { defaultTransport } from "../../mariadb/client.ts";
import { mariaDBDatabaseOrder } from "./kind.ts";

const input = (ca?: string) => ({
  endpoint: { host: "db", port: 3306 },
  resource: "d",
  username: "u",
  password: "p",
  backend: {
    name: "mariadb",
    mariadb: { namespace: "cp", name: "mariadb" },
    secret: { namespace: "cp", name: "admin" },
    endpoint: { host: "db", port: 3306 },
    ca,
  },
});

describe("a MariaDBDatabase's delivered Secret with mariadb-tls", () => {
  const tls = { ...defaultTransport, tls: true, ca: "FILE CA" };

  it("carries the CA the operator trusts: the credentials Secret's, else mariadb-ca-file's", () => {
    expect(mariaDBDatabaseOrder({ transport: tls }).deliveredData(input("SECRET CA"))["ca.crt"]).toBe(
      "SECRET CA",
    );
    expect(mariaDBDatabaseOrder({ transport: tls }).deliveredData(input())["ca.crt"]).toBe("FILE CA");
  });

  it("names the tenant's files under mariadb-tenant-tls-dir, /etc/mysql/certs by default", () => {
    expect(mariaDBDatabaseOrder({ transport: tls }).deliveredData(input())["connection"]).toBe(
      "mysql+pymysql://u:p@db:3306/d?charset=utf8&ssl_ca=/etc/mysql/certs/ca.crt&ssl_cert=/etc/mysql/certs/tls.crt&ssl_key=/etc/mysql/certs/tls.key",
    );
    const data = mariaDBDatabaseOrder({ transport: tls, tenantTlsDir: "/certs" }).deliveredData(input());
    expect(data["connection"]).toContain(
      "?charset=utf8&ssl_ca=/certs/ca.crt&ssl_cert=/certs/tls.crt&ssl_key=/certs/tls.key",
    );
  });

  it("without TLS: the plain URL, and the server's CA only when its Secret carries one", () => {
    const plain = mariaDBDatabaseOrder({ transport: { ...defaultTransport, ca: "FILE CA" } });
    expect(plain.deliveredData(input())).not.toHaveProperty("ca.crt");
    expect(plain.deliveredData(input("SECRET CA"))["ca.crt"]).toBe("SECRET CA");
    expect(plain.deliveredData(input())["connection"]).toBe("mysql+pymysql://u:p@db:3306/d?charset=utf8");
  });
});
