// The statements the SQL controller sends, against the real MariaDB, with hostile names: quotes,
// backticks, backslashes, '%' and '_' (wildcards where GRANT matches database names), and names at
// the server's limits (64 characters for a database name, 128 for a user name) and one beyond. The
// CRDs keep upstream's 80 for User.spec.name; a Grant's username has no bound but the server's.
import { afterAll, describe, expect, it } from "vitest";
import {
  declareDatabase,
  declareGrant,
  declareUser,
  dropDatabase,
  dropUser,
  nativePasswordHash,
  readBackGrant,
  readBackUser,
  revokeGrant,
  sqlFailure,
  type GrantState,
  type UserState,
} from "../../src/sql/statements/index.ts";
import { adminServer, asUser } from "../../harness/world/sql.ts";

const server = adminServer();
const tag = Math.random().toString(36).slice(2, 6);
const hostileDb = `q'b\`s\\p%u_${tag}`;
// The same name with '_' taken literally: a grant on hostileDb must not reach it.
const sibling = hostileDb.replace("_", "X");
const longDb = `${tag}${"d".repeat(60)}`;
const hostileUser = `o'b\`r\\%_"${tag}`.padEnd(128, "u");
const hostilePassword = `p'w\`"\\%_;-- ${tag}`;

afterAll(async () => {
  for (const db of [hostileDb, sibling, longDb]) await dropDatabase(server, db).catch(() => undefined);
  await dropUser(server, hostileUser, "%").catch(() => undefined);
  await server.close();
});

describe("statements with hostile names", () => {
  it("creates databases whose names hold quotes, backticks, backslashes and wildcards, up to 64 characters", async () => {
    expect(longDb).toHaveLength(64);
    for (const name of [hostileDb, sibling, longDb]) {
      expect(await declareDatabase(server, { name, characterSet: "utf8", collate: "utf8_general_ci" })).toBe(
        "created",
      );
    }
    const rows = await server.select<{ name: string }>(
      "SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN (?, ?, ?)",
      [hostileDb, sibling, longDb],
    );
    expect(rows.map((r) => r.name).sort()).toEqual([hostileDb, sibling, longDb].sort());
    const tooLong = await declareDatabase(server, {
      name: `${longDb}x`,
      characterSet: "utf8",
      collate: "utf8_general_ci",
    }).catch((e: unknown) => sqlFailure(e, []));
    expect(tooLong).toMatchObject({ kind: "refused", message: expect.stringContaining("ER_WRONG_DB_NAME") });
  });

  it("creates a 128-character account with a hostile password that logs in, and refuses 129 characters", async () => {
    const state: UserState = {
      name: hostileUser,
      host: "%",
      passwordHash: nativePasswordHash(hostilePassword),
      maxUserConnections: 0,
      requireX509: false,
    };
    expect(await declareUser(server, state)).toBe("created");
    expect(await declareUser(server, state)).toBe("unchanged");
    expect(await asUser(hostileUser, hostilePassword, "SELECT CURRENT_USER() AS me")).toEqual([
      { me: `${hostileUser}@%` },
    ]);
    const refused = await declareUser(server, { ...state, name: `${hostileUser}x` }).catch((e: unknown) =>
      sqlFailure(e, [hostilePassword]),
    );
    expect(refused).toMatchObject({ kind: "refused" });
    expect(JSON.stringify(refused)).not.toContain(state.passwordHash);
  });

  it("grants on exactly the named database: '_' and '%' are no wildcards", async () => {
    const grant: GrantState = {
      privileges: ["SELECT", "CREATE"],
      database: hostileDb,
      table: "*",
      username: hostileUser,
      host: "%",
      grantOption: false,
    };
    expect((await readBackGrant(server, grant)).matches).toBe(false);
    await declareGrant(server, grant);
    expect(await readBackGrant(server, grant)).toMatchObject({ matches: true, extra: [] });
    const visible = (await asUser(hostileUser, hostilePassword, "SHOW DATABASES")) as { Database: string }[];
    expect(visible.map((r) => r.Database)).toContain(hostileDb);
    expect(visible.map((r) => r.Database)).not.toContain(sibling);
    await expect(asUser(hostileUser, hostilePassword, "SELECT 1", { database: sibling })).rejects.toThrow(
      /denied/,
    );
    // Fewer privileges in the spec: still matched (additive), the rest reported.
    expect(await readBackGrant(server, { ...grant, privileges: ["SELECT"] })).toMatchObject({
      matches: true,
      extra: ["CREATE"],
    });
    await revokeGrant(server, grant);
    expect(await readBackGrant(server, grant)).toMatchObject({ exists: false, matches: false });
  });

  it("reads back a password changed out of band as a difference", async () => {
    await server.run(`ALTER USER \`${hostileUser.replaceAll("`", "``")}\`@\`%\` IDENTIFIED BY 'other'`);
    const back = await readBackUser(server, {
      name: hostileUser,
      host: "%",
      passwordHash: nativePasswordHash(hostilePassword),
      maxUserConnections: 0,
      requireX509: false,
    });
    expect(back).toEqual({ exists: true, matches: false, differences: ["password"] });
  });
});
