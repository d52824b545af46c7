// How an account's password reaches the server: as its hash, or as itself where the server validates
// passwords and would refuse a hash; a policy's refusal names the policy and never the password.
import { describe, expect, it } from "vitest";
import type { SqlSession } from "./client.ts";
import { sqlFailure } from "./errors.ts";
import { nativePasswordHash } from "../../mariadb/sql-text.ts";
import { PasswordRefused } from "./password-validation.ts";
import { declareUser, type UserRow, type UserState } from "./user.ts";

const PASSWORD = "Zq3-uV9_kw'\\x";
const state: UserState = {
  name: "nova-v1",
  host: "%",
  passwordHash: nativePasswordHash(PASSWORD),
  password: PASSWORD,
  maxUserConnections: 0,
  requireX509: false,
};

interface ServerShape {
  plugins: string[];
  strict: boolean;
  sqlMode?: string;
  /** Refuses every CREATE/ALTER USER carrying a password, as a policy the password fails would. */
  refuses?: boolean;
}

/** A server of one account table: the statements it was sent, and the account they made. */
function fakeServer(shape: ServerShape): SqlSession & { statements: string[] } {
  let account: UserRow | undefined;
  const statements: string[] = [];
  return {
    statements,
    async run(sql) {
      statements.push(sql);
      if (!/^(CREATE|ALTER) USER/.test(sql)) return;
      if (shape.refuses && sql.includes("IDENTIFIED")) {
        throw Object.assign(new Error("Your password does not satisfy the current policy requirements"), {
          errno: 1819,
          code: "ER_NOT_VALID_PASSWORD",
          sqlMessage: "Your password does not satisfy the current policy requirements",
          sql,
        });
      }
      // The server stores the hash of whatever it was given.
      account = {
        hash: state.passwordHash ?? "",
        plugin: "mysql_native_password",
        maxConnections: 0,
        sslType: "",
      };
    },
    async select<T>(sql: string): Promise<T[]> {
      if (sql.includes("@@strict_password_validation"))
        return [{ strict: shape.strict ? 1 : 0, mode: shape.sqlMode ?? "STRICT_TRANS_TABLES" }] as T[];
      if (sql.includes("information_schema.PLUGINS")) return shape.plugins.map((name) => ({ name })) as T[];
      if (sql.includes("FROM mysql.user")) return (account ? [account] : []) as T[];
      return [];
    },
  };
}

const written = (server: { statements: string[] }) =>
  server.statements.filter((s) => /^(CREATE|ALTER) USER/.test(s)).join("\n");

describe("an account's password on the wire", () => {
  it("is its hash where no validation plugin is active, or validation is not strict", async () => {
    for (const shape of [
      { plugins: [], strict: true },
      { plugins: ["simple_password_check"], strict: false },
    ]) {
      const server = fakeServer(shape);
      expect(await declareUser(server, state)).toBe("created");
      expect(written(server)).toContain(`IDENTIFIED BY PASSWORD '${state.passwordHash}'`);
      expect(written(server)).not.toContain("Zq3");
    }
  });

  it("is the password itself, quoted for the sql_mode, where a plugin validates strictly", async () => {
    const server = fakeServer({ plugins: ["simple_password_check"], strict: true });
    expect(await declareUser(server, state)).toBe("created");
    expect(written(server)).toContain(`IDENTIFIED BY 'Zq3-uV9_kw''\\\\x'`);
    const plain = fakeServer({
      plugins: ["cracklib_password_check"],
      strict: true,
      sqlMode: "NO_BACKSLASH_ESCAPES",
    });
    await declareUser(plain, state);
    expect(written(plain)).toContain(`IDENTIFIED BY 'Zq3-uV9_kw''\\x'`);
  });

  it("is refused by the policy as PasswordRefused, naming the policy and not the password", async () => {
    const server = fakeServer({ plugins: ["simple_password_check"], strict: true, refuses: true });
    const error = await declareUser(server, state).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PasswordRefused);
    const failure = sqlFailure(error, [PASSWORD, state.passwordHash ?? ""]);
    expect(failure?.kind).toBe("passwordRefused");
    expect(failure?.message).toBe(
      "the server's password validation (simple_password_check; strict_password_validation ON) refused the password of 'nova-v1'@'%'",
    );
    expect(JSON.stringify(failure)).not.toContain("Zq3");
  });
});
