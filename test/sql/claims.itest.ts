// Claims against the real MariaDB (src/api/sql-claim.ts): a claimed schema or account is created with
// the claim's mark, and one of that name that carries no mark or another claim's is refused, never
// altered, granted on or dropped; two claims racing for one name never share it; an unmarked one is
// taken over only with the adopt leave; a claim's own mark lets it back in (a Retain deletion's data).
import { afterAll, describe, expect, it } from "vitest";
import {
  accountClaim,
  databaseClaim,
  declareDatabase,
  declareUser,
  dropDatabase,
  dropUser,
  nativePasswordHash,
  NotOwnedOnServer,
  type DatabaseState,
  type UserState,
} from "../../src/sql/statements/index.ts";
import { adminServer, asUser } from "../../harness/world/sql.ts";

const server = adminServer();
const tag = Math.random().toString(36).slice(2, 8);
const db = (n: string) => `claim_${n}_${tag}`;
const account = (n: string) => `claim-${n}-${tag}`;
const made: { dbs: string[]; users: string[] } = { dbs: [], users: [] };
const ours = "MariaDBDatabase /tenant-a/nova";
const theirs = "MariaDBDatabase /tenant-b/nova";

const schema = (name: string, claim?: string, more: Partial<DatabaseState> = {}): DatabaseState => {
  made.dbs.push(name);
  return { name, characterSet: "utf8", collate: "utf8_general_ci", claim, ...more };
};
const user = (name: string, password: string, claim?: string, more: Partial<UserState> = {}): UserState => {
  made.users.push(name);
  return {
    name,
    host: "%",
    passwordHash: nativePasswordHash(password),
    maxUserConnections: 0,
    requireX509: false,
    claim,
    ...more,
  };
};
const charset = async (name: string) =>
  (
    await server.select<{ c: string }>(
      "SELECT DEFAULT_CHARACTER_SET_NAME AS c FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
      [name],
    )
  )[0]?.c;
const storedHash = async (name: string) =>
  (
    await server.select<{ h: string }>(
      "SELECT authentication_string AS h FROM mysql.user WHERE User = ? AND Host = '%'",
      [name],
    )
  )[0]?.h;
const q = (name: string) => `\`${name}\``;

afterAll(async () => {
  for (const name of made.dbs) await server.run(`DROP DATABASE IF EXISTS ${q(name)}`).catch(() => undefined);
  for (const name of made.users) {
    await server.run(`DROP USER IF EXISTS ${q(name)}@'%'`).catch(() => undefined);
    await server.run(`DELETE FROM vhost_broker.account_claims WHERE user = '${name}'`).catch(() => undefined);
  }
  await server.close();
});

describe("a claimed database", () => {
  it("is created with the claim in its comment, and another claim of its name is refused, leaving it as it is", async () => {
    const name = db("a");
    expect(await declareDatabase(server, schema(name, ours))).toBe("created");
    expect(await databaseClaim(server, name)).toBe(ours);
    const other = schema(name, theirs, { characterSet: "latin1", collate: "latin1_swedish_ci" });
    await expect(declareDatabase(server, other)).rejects.toThrow(NotOwnedOnServer);
    await expect(declareDatabase(server, other)).rejects.toThrow(`created for ${ours}, not for ${theirs}`);
    // Nor does an object without a claim (seed 002's take-over) get it.
    await expect(
      declareDatabase(
        server,
        schema(name, undefined, { characterSet: "latin1", collate: "latin1_swedish_ci" }),
      ),
    ).rejects.toThrow(NotOwnedOnServer);
    expect(await charset(name)).toMatch(/^utf8/);
    expect(await dropDatabase(server, name, theirs)).toBe("notOwned");
    expect(await dropDatabase(server, name)).toBe("notOwned");
    expect(await charset(name)).toBeDefined();
  });

  it("reattaches to its own claim after the object is gone (Retain), repairing drift", async () => {
    const name = db("r");
    expect(await declareDatabase(server, schema(name, ours))).toBe("created");
    await server.run(`CREATE TABLE ${q(name)}.kept (id INT)`);
    await server.run(`ALTER DATABASE ${q(name)} CHARACTER SET latin1 COLLATE latin1_swedish_ci`);
    expect(await declareDatabase(server, schema(name, ours))).toBe("altered");
    expect(await databaseClaim(server, name)).toBe(ours);
    const tables = await server.select<{ t: string }>(
      "SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?",
      [name],
    );
    expect(tables.map((r) => r.t)).toEqual(["kept"]);
    expect(await dropDatabase(server, name, ours)).toBe("dropped");
    expect(await databaseClaim(server, name)).toBeUndefined();
  });

  it("refuses an unmarked schema of its name, and takes it over only with the adopt leave", async () => {
    const name = db("u");
    await server.run(`CREATE DATABASE ${q(name)} CHARACTER SET latin1`);
    await expect(declareDatabase(server, schema(name, ours))).rejects.toThrow(
      "that this controller did not create",
    );
    expect(await charset(name)).toBe("latin1");
    expect(await dropDatabase(server, name, ours)).toBe("notOwned");
    expect(await declareDatabase(server, schema(name, ours, { adoptUnmarked: true }))).toBe("altered");
    expect(await databaseClaim(server, name)).toBe(ours);
    // Once marked, the leave lets nobody else in.
    await expect(declareDatabase(server, schema(name, theirs, { adoptUnmarked: true }))).rejects.toThrow(
      NotOwnedOnServer,
    );
  });

  it("goes to one of two claims racing for its name, never to both", async () => {
    for (let round = 0; round < 5; round++) {
      const name = db(`race${round}`);
      const results = await Promise.allSettled([
        declareDatabase(server, schema(name, ours)),
        declareDatabase(server, schema(name, theirs)),
      ]);
      const won = results.filter((r) => r.status === "fulfilled");
      const lost = results.filter((r) => r.status === "rejected");
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(NotOwnedOnServer);
      expect(await databaseClaim(server, name)).toBe(results[0].status === "fulfilled" ? ours : theirs);
    }
  });
});

describe("a claimed account", () => {
  it("is recorded under its claim, and another claim's User is refused without touching it", async () => {
    const name = account("a");
    expect(await declareUser(server, user(name, "first", ours))).toBe("created");
    expect(await accountClaim(server, name, "%")).toBe(ours);
    const before = await storedHash(name);
    await expect(declareUser(server, user(name, "stolen", theirs))).rejects.toThrow(
      `created for ${ours}, not for ${theirs}`,
    );
    await expect(declareUser(server, user(name, "stolen"))).rejects.toThrow(NotOwnedOnServer);
    expect(await storedHash(name)).toBe(before);
    await expect(asUser(name, "stolen", "SELECT 1")).rejects.toThrow();
    await asUser(name, "first", "SELECT 1");
    expect(await dropUser(server, name, "%", theirs)).toBe("notOwned");
    expect(await storedHash(name)).toBe(before);
    // Its own claim rotates it, and drops it with its row.
    expect(await declareUser(server, user(name, "second", ours))).toBe("altered");
    expect(await dropUser(server, name, "%", ours)).toBe("dropped");
    expect(await storedHash(name)).toBeUndefined();
    expect(await accountClaim(server, name, "%")).toBeUndefined();
  });

  it("refuses an account it did not create, never altering its password, unless adopting it", async () => {
    const name = account("f");
    await server.run(`CREATE USER ${q(name)}@'%' IDENTIFIED BY 'theirs'`);
    made.users.push(name);
    await expect(declareUser(server, user(name, "mine", ours))).rejects.toThrow(
      "which this controller did not create",
    );
    await asUser(name, "theirs", "SELECT 1");
    await expect(asUser(name, "mine", "SELECT 1")).rejects.toThrow();
    expect(await accountClaim(server, name, "%")).toBeUndefined();
    expect(await dropUser(server, name, "%", ours)).toBe("notOwned");
    await asUser(name, "theirs", "SELECT 1");
    expect(await declareUser(server, user(name, "mine", ours, { adoptUnmarked: true }))).toBe("altered");
    expect(await accountClaim(server, name, "%")).toBe(ours);
    await asUser(name, "mine", "SELECT 1");
  });

  it("goes to one of two claims racing for it, never to both", async () => {
    for (let round = 0; round < 5; round++) {
      const name = account(`race${round}`);
      const results = await Promise.allSettled([
        declareUser(server, user(name, "one", ours)),
        declareUser(server, user(name, "two", theirs)),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const winner = results[0].status === "fulfilled" ? ours : theirs;
      expect(await accountClaim(server, name, "%")).toBe(winner);
      await asUser(name, winner === ours ? "one" : "two", "SELECT 1");
    }
  });
});
