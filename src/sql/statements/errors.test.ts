import { describe, expect, it } from "vitest";
import { NotThereYet, sqlFailure } from "./errors.ts";
import { InvalidSqlValue } from "../../mariadb/sql-text.ts";

const serverError = (errno: number, code: string, sqlMessage: string, fatal = false) =>
  Object.assign(new Error(sqlMessage), { errno, code, sqlMessage, fatal, sql: "ALTER USER ... 'hunter2'" });

describe("what a failed statement means", () => {
  it("waits for a missing account, database or table", () => {
    expect(
      sqlFailure(serverError(1133, "ER_PASSWORD_NO_MATCH", "Can't find any matching row"), [])?.kind,
    ).toBe("missing");
    expect(sqlFailure(serverError(1049, "ER_BAD_DB_ERROR", "Unknown database 'x'"), [])?.kind).toBe(
      "missing",
    );
    expect(sqlFailure(new NotThereYet("'u' cannot log in yet"), [])?.kind).toBe("missing");
  });

  it("retries a server out of reach, and reports a refusal", () => {
    expect(
      sqlFailure(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED", errno: -111 }), []),
    ).toEqual({
      kind: "unreachable",
      message: "connect ECONNREFUSED (ECONNREFUSED)",
    });
    expect(sqlFailure(serverError(1045, "ER_ACCESS_DENIED_ERROR", "Access denied", true), [])?.kind).toBe(
      "unreachable",
    );
    expect(
      sqlFailure(serverError(1115, "ER_UNKNOWN_CHARACTER_SET", "Unknown character set: 'x'"), []),
    ).toEqual({
      kind: "refused",
      message: "Unknown character set: 'x' (ER_UNKNOWN_CHARACTER_SET)",
    });
    expect(sqlFailure(new InvalidSqlValue("not a privilege"), [])?.kind).toBe("refused");
  });

  it("keeps the statement and every known secret out of the message", () => {
    const failure = sqlFailure(serverError(1064, "ER_PARSE_ERROR", "syntax error near 'hunter2'"), [
      "hunter2",
    ]);
    expect(failure?.message).toBe("syntax error near '[redacted]' (ER_PARSE_ERROR)");
    expect(sqlFailure(new TypeError("bug"), [])).toBeUndefined();
  });
});
