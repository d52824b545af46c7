import { describe, expect, it } from "vitest";
import { parseServerCredentials, usableHost } from "./credentials.ts";

const b64 = (text: string) => Buffer.from(text).toString("base64");
const secret = (host: string) => ({
  host: b64(host),
  port: b64("3306"),
  username: b64("root"),
  password: b64("secret"),
});

describe("the credentials Secret's host", () => {
  it("is a host name or an IP address", () => {
    for (const host of ["mariadb.openstack.svc", "db_1", "10.0.0.1", "fd00::1", "fe80::1%eth0"]) {
      expect(usableHost(host), host).toBe(true);
    }
    expect(parseServerCredentials(secret("mariadb.openstack.svc")).outcome).toBe("ready");
  });

  it("refuses what would break the delivered URL, naming the host and never the password", () => {
    for (const host of ["a$b", "a,b", "a/b", "u@h", "h:1", "a b", "-x", "[::1]"]) {
      const read = parseServerCredentials(secret(host));
      expect(read, host).toEqual({
        outcome: "badHost",
        message: `"${host}" is not a host name or IP address`,
      });
    }
  });
});
