// A stand-in for the SQL server in whole-pass tests: it knows databases only (CREATE, DROP, the
// SCHEMATA lookup and the catalogue's list) and records every statement sent; it can be down, refuse
// every statement, or validate passwords with a policy no password meets.
import type { SqlServer } from "../../src/sql/statements/index.ts";

/** Databases by name with their character set; every statement sent, in order. */
export class DatabaseServer implements SqlServer {
  readonly databases = new Map<string, string>();
  readonly sent: string[] = [];
  down = false;
  /** Every statement is refused, as the server refuses a statement it cannot run. */
  refusing = false;
  /** simple_password_check active and strict: a hash is refused, and so is every password. */
  validating = false;

  async run(sql: string): Promise<void> {
    this.check();
    this.sent.push(sql);
    if (this.validating && /^(CREATE|ALTER) USER/.test(sql)) {
      const [errno, code] = sql.includes("IDENTIFIED BY PASSWORD")
        ? [1290, "ER_OPTION_PREVENTS_STATEMENT"]
        : [1819, "ER_NOT_VALID_PASSWORD"];
      throw Object.assign(new Error(code), { errno, code, sqlMessage: code, sql });
    }
    const create = /^CREATE DATABASE IF NOT EXISTS `(.*)` CHARACTER SET (\w+)/.exec(sql);
    if (create?.[1] && !this.databases.has(create[1])) this.databases.set(create[1], create[2] ?? "");
    const drop = /^DROP DATABASE IF EXISTS `(.*)`$/.exec(sql);
    if (drop?.[1]) this.databases.delete(drop[1]);
  }

  async select<T>(sql: string, params: (string | number)[]): Promise<T[]> {
    this.check();
    this.sent.push(sql);
    if (sql.includes("@@strict_password_validation"))
      return [{ strict: this.validating ? 1 : 0, mode: "STRICT_TRANS_TABLES" } as T];
    if (sql.includes("information_schema.PLUGINS"))
      return this.validating ? [{ name: "simple_password_check" } as T] : [];
    // The catalogue's list of every schema (a lookup names one); its other lists are empty here.
    if (sql.includes("SCHEMATA") && params.length === 0) {
      return [...this.databases].map(
        ([name, charset]) => ({ name, charset, collation: `${charset}_general_ci`, comment: "" }) as T,
      );
    }
    const charset = this.databases.get(String(params[0]));
    if (!sql.includes("SCHEMATA") || charset === undefined) return [];
    return [{ charset, collation: `${charset}_general_ci` } as T];
  }

  async login(): Promise<void> {}
  async close(): Promise<void> {}

  private check(): void {
    if (this.down) throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    if (this.refusing) {
      throw Object.assign(new Error("Access denied for user"), {
        code: "ER_DBACCESS_DENIED_ERROR",
        errno: 1044,
      });
    }
  }
}
