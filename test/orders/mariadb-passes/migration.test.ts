// A MariaDBDatabase order moved to another MariaDB in whole passes on the fake port: the ControlPlane's
// database names another server, and the order provisions a Database, User and Grant there, delivers the
// new server's address once the successor is accepted, sweeps the old account after its grace period
// and the hold (the old server's sessions cannot be asked: the ControlPlane's secretRef names the new
// server's administrator), then releases the old Database under the deletion policy.
import { beforeEach, describe, expect, it } from "vitest";
import {
  controlPlaneKind,
  mariaDBKind,
  secretKind,
  sqlDatabaseKind,
  sqlUserKind,
} from "../../../src/api/index.ts";
import { movedContainerName } from "../../../src/orders/core/containers.ts";
import { CP_NS, b64, clock, events, kube, names } from "../pass-world.ts";
import {
  PREFIX,
  condition,
  converge,
  deliveredData,
  pass,
  setUp,
  sql,
  status,
  user,
  world,
} from "./fixture.ts";

beforeEach(setUp);

const DATABASE_CR = `${PREFIX}-db-database`;

/** A second MariaDB, Ready, with its administrator's Secret; the ControlPlane pointed at it. */
function moveTo(name: string, host: string): void {
  kube.put(mariaDBKind, {
    metadata: { name, namespace: CP_NS },
    spec: {},
    status: { conditions: [{ type: "Ready", status: "True" }] },
  });
  const credentials = { username: "root", password: "admin-pw-b", host, port: "3306" };
  kube.put(secretKind, {
    metadata: { name: `${name}-admin`, namespace: CP_NS },
    data: Object.fromEntries(Object.entries(credentials).map(([k, v]) => [k, b64(v)])),
  });
  const cp = kube.read(controlPlaneKind, CP_NS, "cp");
  kube.put(controlPlaneKind, {
    ...cp,
    spec: {
      ...(cp?.["spec"] as object),
      infrastructure: { database: { clusterRef: { name }, secretRef: { name: `${name}-admin` } } },
    },
  });
}

const mariaDbRef = (kind: typeof sqlUserKind, name: string) =>
  (kube.read(kind, CP_NS, name)?.["spec"] as { mariaDbRef?: { name: string } } | undefined)?.mariaDbRef?.name;

describe("a MariaDBDatabase whose ControlPlane names another MariaDB", () => {
  it("moves to the new server, then releases the old Database under Delete", async () => {
    world({ deletionPolicy: "Delete" });
    await converge();
    expect(status()["backend"]).toBe("mariadb");
    moveTo("mariadb-b", "mariadb-b.openstack.svc");
    const moved = movedContainerName(DATABASE_CR, "mariadb-b");
    for (let i = 0; i < 4; i++) {
      await pass();
      await sql();
    }
    expect(names(sqlDatabaseKind)).toEqual([DATABASE_CR, moved].sort());
    expect(mariaDbRef(sqlDatabaseKind, moved)).toBe("mariadb-b");
    expect(mariaDbRef(sqlUserKind, `${PREFIX}-db-user-v2`)).toBe("mariadb-b");
    expect(deliveredData()).toMatchObject({ host: "mariadb-b.openstack.svc", username: user(2) });
    expect(status()).toMatchObject({
      backend: "mariadb-b",
      passwordGeneration: 2,
      previousPasswordGeneration: 1,
      migration: { from: "mariadb", to: "mariadb-b", phase: "Draining" },
    });
    expect(condition("DatabaseReady")?.message).toContain(
      'moved from MariaDB "mariadb" to "mariadb-b": what the order holds on "mariadb" is released',
    );

    // Past the grace period the old server cannot be asked who uses the old account: held, at most the hold.
    clock.advance(60_000);
    await pass();
    expect(
      kube.read(sqlUserKind, CP_NS, `${PREFIX}-db-user-v1`)?.metadata?.deletionTimestamp,
    ).toBeUndefined();
    expect(condition("DatabaseReady")?.message).toContain("cannot tell who uses it");
    clock.advance(60_000);
    await pass();
    await sql();
    await pass();
    await sql();
    await pass();
    expect(names(sqlUserKind)).toEqual([`${PREFIX}-db-user-v2`]);
    // The old Database went with cleanupPolicy Delete: the SQL controller drops it.
    expect(names(sqlDatabaseKind)).toEqual([moved]);
    await pass();
    expect(status()["migration"]).toBeUndefined();
    expect(status()["backend"]).toBe("mariadb-b");
    expect(events.map((e) => e.reason)).toEqual(
      expect.arrayContaining(["MigrationStarted", "MigrationSwitched", "MigrationCompleted"]),
    );
  });

  it("releases the old Database under Retain with cleanupPolicy Skip, so its data stays", async () => {
    world({ deletionPolicy: "Retain" });
    await converge();
    moveTo("mariadb-b", "mariadb-b.openstack.svc");
    // The old Database's policy as last seen before it went (it has no finalizer under Skip).
    let lastPolicy: string | undefined;
    for (let i = 0; i < 8; i++) {
      const old = kube.read(sqlDatabaseKind, CP_NS, DATABASE_CR);
      if (old) lastPolicy = (old["spec"] as { cleanupPolicy: string }).cleanupPolicy;
      await pass();
      await sql();
      clock.advance(60_000);
    }
    expect(lastPolicy).toBe("Skip");
    expect(names(sqlDatabaseKind)).toEqual([movedContainerName(DATABASE_CR, "mariadb-b")]);
    expect(status()["migration"]).toBeUndefined();
  });
});
