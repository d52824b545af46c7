// Verification by catalogue in whole passes of the SQL engine: once the memo's period is over, the
// objects of a server are verified from one catalogue (five list statements), not one lookup each;
// only an object the catalogue shows as different is read back and written on its own.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { sqlDatabaseKind } from "../../src/api/index.ts";
import { createSharedSqlDeps, sqlReconcileDeps, sqlKind } from "../../src/sql/index.ts";
import { reconcileExternal } from "../../src/external/index.ts";
import { FakeClock } from "../../harness/fakes/fake-clock.ts";
import { FakeKube } from "../../harness/fakes/fake-kube.ts";
import { DatabaseServer } from "./database-server.ts";

const PERIOD = 60_000;
const COUNT = 10;

function world() {
  const clock = new FakeClock();
  const kube = new FakeKube({ now: () => new Date(clock.now()) });
  const server = new DatabaseServer();
  const shared = createSharedSqlDeps({
    server,
    refs: { serve: "all" },
    settings: { verificationPeriodMs: PERIOD, waitingRetryMs: 1_000, transientRetryMs: 5_000 },
    clock,
  });
  const deps = sqlReconcileDeps(shared, kube, pino({ enabled: false }));
  for (let i = 0; i < COUNT; i++) {
    kube.put(sqlDatabaseKind, {
      metadata: { name: `db-${i}`, namespace: "openstack" },
      spec: { name: `db_${i}`, mariaDbRef: { name: "mariadb" } },
    });
  }
  const passAll = async () => {
    const results = [];
    for (let i = 0; i < COUNT; i++)
      results.push(await reconcileExternal(sqlKind.database, deps, "openstack", `db-${i}`));
    return results;
  };
  return { clock, kube, server, passAll };
}

const lookups = (sent: string[]) => sent.filter((s) => s.includes("WHERE SCHEMA_NAME = ?"));
const lists = (sent: string[]) => sent.filter((s) => s.startsWith("SELECT") && !s.includes("WHERE"));

describe("verification by catalogue", () => {
  it("verifies every object of a server from one catalogue a period, with no lookup and no write", async () => {
    const { clock, server, kube, passAll } = world();
    await passAll();
    // The first verification's message ("is up to date", not "created") is written once.
    clock.advance(PERIOD);
    await passAll();
    const sentBefore = server.sent.length;
    const writes = kube.writes().length;
    clock.advance(PERIOD);
    const results = await passAll();
    const sent = server.sent.slice(sentBefore);
    expect(lookups(sent)).toEqual([]);
    expect(lists(sent)).toHaveLength(5);
    expect(sent.filter((s) => !s.startsWith("SELECT"))).toEqual([]);
    expect(kube.writes()).toHaveLength(writes);
    // Due again a period after the catalogue started, together.
    expect(new Set(results.map((r) => r.requeueAfterMs))).toEqual(new Set([PERIOD]));
  });

  it("repairs only what the catalogue shows as different, reading that object back on its own", async () => {
    const { clock, server, passAll } = world();
    await passAll();
    server.databases.delete("db_3");
    const sentBefore = server.sent.length;
    clock.advance(PERIOD);
    await passAll();
    const sent = server.sent.slice(sentBefore);
    expect(server.databases.has("db_3")).toBe(true);
    expect(sent.filter((s) => s.startsWith("CREATE"))).toEqual([
      "CREATE DATABASE IF NOT EXISTS `db_3` CHARACTER SET utf8 COLLATE utf8_general_ci",
    ]);
    expect(lookups(sent).length).toBeGreaterThan(0);
    expect(lists(sent)).toHaveLength(5);
  });

  it("reads the catalogue again once it is a period old", async () => {
    const { clock, server, passAll } = world();
    await passAll();
    clock.advance(PERIOD);
    await passAll();
    const sentBefore = server.sent.length;
    clock.advance(PERIOD);
    await passAll();
    expect(lists(server.sent.slice(sentBefore))).toHaveLength(5);
  });
});
