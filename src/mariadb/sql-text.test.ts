import { describe, expect, it } from "vitest";
import {
  InvalidSqlValue,
  accountName,
  charsetName,
  checkedNativeHash,
  grantTarget,
  nativePasswordHash,
  passwordLiteral,
  privilegeName,
  quoteIdentifier,
  sameCharsetName,
} from "./sql-text.ts";

describe("SQL text", () => {
  it("quotes identifiers with backticks, a backtick doubled, everything else verbatim", () => {
    expect(quoteIdentifier("cinder")).toBe("`cinder`");
    expect(quoteIdentifier("a`b")).toBe("`a``b`");
    expect(quoteIdentifier("o'brien\\%_\"x")).toBe("`o'brien\\%_\"x`");
    expect(() => quoteIdentifier("")).toThrow(InvalidSqlValue);
    expect(() => quoteIdentifier("a\0b")).toThrow(InvalidSqlValue);
  });

  it("names an account with both parts quoted as identifiers", () => {
    expect(accountName("nova", "%")).toBe("`nova`@`%`");
    expect(accountName("x`'y", "10.0.0.%")).toBe("`x``'y`@`10.0.0.%`");
  });

  it("escapes the wildcards of a database-level grant, and only there", () => {
    expect(grantTarget("*", "*")).toBe("*.*");
    expect(grantTarget("nova_cell0", "*")).toBe("`nova\\_cell0`.*");
    expect(grantTarget("100%`x", "*")).toBe("`100\\%``x`.*");
    expect(grantTarget("nova_cell0", "t_1")).toBe("`nova_cell0`.`t_1`");
    expect(() => grantTarget("*", "t")).toThrow(/table needs a database/);
  });

  it("quotes a password literal for the session's sql_mode: a quote doubled, a backslash unless it is plain", () => {
    expect(passwordLiteral("Ab1-x", false)).toBe("'Ab1-x'");
    expect(passwordLiteral("o'b\\c", false)).toBe("'o''b\\\\c'");
    expect(passwordLiteral("o'b\\c", true)).toBe("'o''b\\c'");
    expect(() => passwordLiteral("a\0b", false)).toThrow(InvalidSqlValue);
  });

  it("hashes a password as mysql_native_password stores it", () => {
    // SELECT PASSWORD('password') on MariaDB.
    expect(nativePasswordHash("password")).toBe("*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19");
    expect(checkedNativeHash("*2470c0c06dee42fd1618bb99005adca2ec9d1e19")).toBe(
      "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19",
    );
    expect(() => checkedNativeHash("*2470' OR 1=1 --")).toThrow(InvalidSqlValue);
  });

  it("accepts character set and collation names only", () => {
    expect(charsetName("utf8mb4", "characterSet")).toBe("utf8mb4");
    expect(() => charsetName("utf8; DROP DATABASE x", "characterSet")).toThrow(InvalidSqlValue);
    expect(sameCharsetName("utf8", "utf8mb3")).toBe(true);
    expect(sameCharsetName("utf8_general_ci", "utf8mb3_general_ci")).toBe(true);
    expect(sameCharsetName("utf8mb4", "utf8mb3")).toBe(false);
  });

  it("spells privileges as GRANT does and refuses anything else", () => {
    expect(privilegeName("all")).toBe("ALL PRIVILEGES");
    expect(privilegeName(" create   temporary tables ")).toBe("CREATE TEMPORARY TABLES");
    expect(() => privilegeName("SELECT ON *.* TO x; --")).toThrow(InvalidSqlValue);
  });
});
