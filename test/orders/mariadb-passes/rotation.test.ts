// Rotation of the MariaDBDatabase order in whole passes on the fake Kubernetes port: on schedule or on
// a raised passwordGeneration, the switch once the server accepts the successor's login, the grace
// period, and the sweep with its hold and its search for strays.
import { beforeEach, describe, expect, it } from "vitest";
import { mariaDBDatabaseKind, secretKind, sqlGrantKind, sqlUserKind } from "../../../src/api/index.ts";
import { reconcileOrder } from "../../../src/orders/core/reconcile.ts";
import { mariaDBDatabaseOrder } from "../../../src/orders/mariadb/kind.ts";
import { CP_NS, TENANT, acceptSuccessor, clock, deps, events, kube, names } from "../pass-world.ts";
import {
  NAME,
  PREFIX,
  condition,
  converge,
  deliveredData,
  order,
  pass,
  setUp,
  sql,
  status,
  user,
  world,
} from "./fixture.ts";

beforeEach(setUp);

describe("a MariaDBDatabase on the fake port", () => {
  it("rotates on schedule, keeps the old user for the grace period, then sweeps its User, Grant and Secret", async () => {
    world();
    await converge();
    clock.advance(180_000);
    await pass();
    expect(names(sqlUserKind)).toEqual([`${PREFIX}-db-user-v1`, `${PREFIX}-db-user-v2`]);
    expect(deliveredData()["username"]).toBe(user(1));
    await sql();
    await pass();
    await sql();
    expect(await pass()).toEqual({ requeueAfterMs: 60_000 });
    expect(status()).toMatchObject({ passwordGeneration: 2, previousPasswordGeneration: 1 });
    expect(deliveredData()["username"]).toBe(user(2));
    expect(events.map((e) => e.reason)).toContain("Rotated");
    clock.advance(60_000);
    await pass();
    // The sweep deletes the old User and Grant; the SQL controller drops the account and lets them go.
    expect(kube.read(sqlUserKind, CP_NS, `${PREFIX}-db-user-v1`)?.metadata?.deletionTimestamp).toBeDefined();
    await sql();
    expect(names(sqlUserKind)).toEqual([`${PREFIX}-db-user-v2`]);
    expect(names(sqlGrantKind)).toEqual([`${PREFIX}-db-grant-v2`]);
    await pass();
    expect(status()["previousPasswordGeneration"]).toBeUndefined();
    expect(kube.all(secretKind).filter((s) => s.metadata?.name?.includes("password-v1"))).toEqual([]);
  });

  it("holds the sweep while the server lists sessions of the superseded account", async () => {
    world();
    await converge();
    let sessions = 1;
    const asked: string[] = [];
    deps.connections = async (username) => {
      asked.push(username);
      return { known: true, count: sessions };
    };
    clock.advance(180_000);
    await pass();
    await sql();
    await pass();
    await sql();
    await pass();
    expect(asked).toEqual([]);
    clock.advance(60_000);
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(asked).toEqual([user(1)]);
    expect(
      kube.read(sqlUserKind, CP_NS, `${PREFIX}-db-user-v1`)?.metadata?.deletionTimestamp,
    ).toBeUndefined();
    expect(condition("DatabaseReady")?.message).toContain(
      `the superseded user "${user(1)}" is kept past its grace period while 1 connection still uses it`,
    );
    sessions = 0;
    clock.advance(10_000);
    await pass();
    expect(kube.read(sqlUserKind, CP_NS, `${PREFIX}-db-user-v1`)?.metadata?.deletionTimestamp).toBeDefined();
  });

  it("asks the server once per sweep for the strays of its naming scheme that no User declares", async () => {
    world();
    await converge();
    const asked: { stray: (username: string) => boolean; order: { name: string } }[] = [];
    const kind = {
      ...mariaDBDatabaseOrder(),
      removeStrayAccounts: async (
        ...[, , , stray, , key]: Parameters<
          NonNullable<ReturnType<typeof mariaDBDatabaseOrder>["removeStrayAccounts"]>
        >
      ) => {
        asked.push({ stray, order: key });
        return { removed: [] };
      },
    };
    const kindPass = () => reconcileOrder(kind, { ...deps, strayAccounts: undefined }, "", TENANT, NAME);
    clock.advance(180_000);
    for (let i = 0; i < 3; i++) {
      await kindPass();
      await sql();
    }
    expect(status()).toMatchObject({ passwordGeneration: 2, previousPasswordGeneration: 1 });
    expect(asked).toEqual([]);
    clock.advance(60_000);
    await kindPass();
    expect(kube.read(sqlUserKind, CP_NS, `${PREFIX}-db-user-v1`)?.metadata?.deletionTimestamp).toBeDefined();
    // The sweep completes once v1's User is gone: then the server is asked, once.
    await sql();
    await kindPass();
    expect(asked).toHaveLength(1);
    expect(asked[0]?.order.name).toBe(NAME);
    // v1 and v3 have no User (a stray of either is dropped); v2 is live; another order's name is never one.
    const stray = asked[0]!.stray;
    expect([1, 2, 3].map((n) => stray(user(n)))).toEqual([true, false, true]);
    expect(stray(`${NAME}-00000000-v3`)).toBe(false);
    await kindPass();
    expect(asked).toHaveLength(1);
  });

  it("keeps the delivered user while the server refuses the successor's login, and switches once it accepts", async () => {
    world();
    await converge();
    acceptSuccessor(false);
    clock.advance(180_000);
    for (let i = 0; i < 3; i++) {
      await pass();
      await sql();
    }
    expect(deliveredData()["username"]).toBe(user(1));
    expect(condition("DatabaseReady")).toMatchObject({ status: "True", reason: "DatabaseProvisioned" });
    expect(condition("DatabaseReady")?.message).toContain(
      `its successor user "${user(2)}" is not switched to yet: the server refuses a login of user "${user(2)}" (test)`,
    );
    acceptSuccessor(true);
    await pass();
    expect(deliveredData()["username"]).toBe(user(2));
  });

  it("raised passwordGeneration rotates at once", async () => {
    world();
    await converge();
    const raw = order();
    kube.put(mariaDBDatabaseKind, { ...raw, spec: { ...(raw?.["spec"] as object), passwordGeneration: 3 } });
    for (let i = 0; i < 4; i++) {
      await pass();
      await sql();
    }
    expect(status()["passwordGeneration"]).toBe(3);
    expect(deliveredData()["username"]).toBe(user(3));
  });
});
