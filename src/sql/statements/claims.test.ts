// The marks' text: a claim is written only in an alphabet no sql_mode reads differently inside quotes,
// and a schema comment is read back as a claim only when this controller wrote it.
import { describe, expect, it } from "vitest";
import { claimLiteral, claimOfComment, NotOwnedOnServer, schemaMark } from "./claims.ts";
import { sqlFailure } from "./errors.ts";
import { InvalidSqlValue } from "../../mariadb/sql-text.ts";

describe("claim marks", () => {
  it("quote an order's claim, and refuse quotes, backslashes and anything beyond the alphabet", () => {
    expect(claimLiteral("MariaDBDatabase edge-1/tenant-a/nova")).toBe(
      "'MariaDBDatabase edge-1/tenant-a/nova'",
    );
    for (const hostile of ["a'b", "a\\b", 'a"b', "a`b", "a\nb", "", "x".repeat(513)]) {
      expect(() => claimLiteral(hostile)).toThrow(InvalidSqlValue);
    }
  });

  it("read a claim back only from a comment this controller wrote", () => {
    expect(claimOfComment(schemaMark("MariaDBDatabase /a/b"))).toBe("MariaDBDatabase /a/b");
    expect(claimOfComment("")).toBeUndefined();
    expect(claimOfComment("MariaDBDatabase /a/b")).toBeUndefined();
  });

  it("make a refusal a NotOwned failure, not a server error", () => {
    expect(sqlFailure(new NotOwnedOnServer("database x exists"), [])).toEqual({
      kind: "notOwned",
      message: "database x exists",
    });
  });
});
