import { describe, expect, it } from "vitest";
import { connectionOptions, defaultTransport, lockWaitStatement, tlsOptions, trustedCa } from "./client.ts";

const tls = { ...defaultTransport, tls: true };
const account = { host: "db", port: 3306, user: "u", password: "p" };

describe("the CA rule", () => {
  it("trusts the server's own CA first, then the configured one, else the system's", () => {
    expect(trustedCa({ ...tls, ca: "configured" }, "from-secret")).toBe("from-secret");
    expect(trustedCa({ ...tls, ca: "configured" })).toBe("configured");
    expect(trustedCa(tls)).toBeUndefined();
  });

  it("connects in plain whatever CA the server carries when the transport has no TLS", () => {
    expect(tlsOptions({ ...defaultTransport, ca: "configured" }, "from-secret")).toBeUndefined();
  });

  it("verifies the server over TLS and presents the client certificate when there is one", () => {
    expect(tlsOptions(tls)).toEqual({ rejectUnauthorized: true });
    expect(tlsOptions({ ...tls, client: { cert: "C", key: "K" } }, "from-secret")).toEqual({
      rejectUnauthorized: true,
      ca: "from-secret",
      cert: "C",
      key: "K",
    });
  });
});

describe("a connection's options", () => {
  it("take the transport's connect deadline, shortened by a caller's budget", () => {
    expect(connectionOptions(tls, account).connectTimeout).toBe(10_000);
    expect(connectionOptions(tls, account, { budgetMs: 2_000 }).connectTimeout).toBe(2_000);
    expect(connectionOptions(tls, account, { budgetMs: 60_000 }).connectTimeout).toBe(10_000);
  });

  it("name the database only when there is one, and never allow several statements at once", () => {
    expect(connectionOptions(tls, account)).not.toHaveProperty("database");
    const options = connectionOptions(tls, { ...account, database: "d" });
    expect(options).toMatchObject({ database: "d", multipleStatements: false });
  });

  it("bound the session's lock waits in whole seconds, at least one", () => {
    expect(lockWaitStatement(30_000)).toBe(
      "SET SESSION lock_wait_timeout = 30, innodb_lock_wait_timeout = 30",
    );
    expect(lockWaitStatement(200)).toBe("SET SESSION lock_wait_timeout = 1, innodb_lock_wait_timeout = 1");
  });
});
