// The gates of the MariaDBDatabase order in whole passes on the fake Kubernetes port, and an order on a
// target cluster, whose delivery waits for a published database endpoint.
import { beforeEach, describe, expect, it } from "vitest";
import {
  controlPlaneKind,
  mariaDBDatabaseKind,
  mariaDBKind,
  rabbitMQVhostKind,
  secretKind,
  sqlDatabaseKind,
  sqlUserKind,
} from "../../../src/api/index.ts";
import { defaultDatabaseName } from "../../../src/orders/mariadb/naming.ts";
import { FakeKube } from "../../../harness/fakes/fake-kube.ts";
import { CP_NS, TENANT, b64, clock, kube } from "../pass-world.ts";
import { NAME, condition, converge, delivered, deliveredData, pass, setUp, sql, world } from "./fixture.ts";

beforeEach(setUp);

describe("the MariaDB gates on the fake port", () => {
  it("a ControlPlane without spec.infrastructure.database refuses the order: DatabaseNotDeclared", async () => {
    world();
    const cp = kube.read(controlPlaneKind, CP_NS, "cp");
    kube.put(controlPlaneKind, { ...cp, spec: { namespaceAssignments: [{ namespace: TENANT }] } });
    await pass();
    await pass();
    for (const type of ["DatabaseReady", "DeliveryReady"])
      expect(condition(type)).toMatchObject({
        reason: "DatabaseNotDeclared",
        message: `ControlPlane ${CP_NS}/cp declares no spec.infrastructure.database; a database is ordered on a managed MariaDB only`,
      });
  });

  it("WaitingForDatabaseCredentials until the MariaDB and a complete credentials Secret exist, every 10 s", async () => {
    world({}, { port: "" });
    kube.remove(mariaDBKind, CP_NS, "mariadb");
    await pass();
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(condition("DatabaseReady")).toMatchObject({
      reason: "WaitingForDatabaseCredentials",
      message: `waiting for MariaDB ${CP_NS}/mariadb to exist`,
    });
    kube.put(mariaDBKind, { metadata: { name: "mariadb", namespace: CP_NS }, spec: {} });
    await pass();
    expect(condition("DeliveryReady")).toMatchObject({
      reason: "WaitingForDatabaseCredentials",
      message: `the credentials Secret ${CP_NS}/mariadb-admin lacks "port"; waiting for it to be complete`,
    });
    kube.remove(secretKind, CP_NS, "mariadb-admin");
    await pass();
    expect(condition("DatabaseReady")?.message).toBe(
      `waiting for the credentials Secret ${CP_NS}/mariadb-admin of MariaDB ${CP_NS}/mariadb`,
    );
  });

  it("WaitingForDatabase until the MariaDB reports Ready", async () => {
    world();
    kube.put(mariaDBKind, { metadata: { name: "mariadb", namespace: CP_NS }, spec: {}, status: {} });
    await pass();
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(condition("DatabaseReady")).toMatchObject({
      reason: "WaitingForDatabase",
      message: `waiting for MariaDB ${CP_NS}/mariadb to report Ready`,
    });
  });

  it("SqlOperatorNotInstalled looks again after 10 minutes", async () => {
    world();
    kube.notServed(sqlDatabaseKind);
    await pass();
    expect(await pass()).toEqual({ requeueAfterMs: 600_000 });
    expect(condition("DatabaseReady")?.reason).toBe("SqlOperatorNotInstalled");
  });

  for (const owner of ["nobody", "a RabbitMQVhost"] as const) {
    it(`a Secret of the delivered name owned by ${owner} is refused: DeliveryRefused`, async () => {
      world();
      kube.put(secretKind, {
        metadata: {
          name: `${NAME}-credentials`,
          namespace: TENANT,
          ...(owner === "nobody"
            ? {}
            : {
                ownerReferences: [
                  {
                    apiVersion: rabbitMQVhostKind.apiVersion,
                    kind: "RabbitMQVhost",
                    name: NAME,
                    uid: "u",
                    controller: true,
                  },
                ],
              }),
        },
        data: { a: b64("b") },
      });
      const result = await converge().catch(() => pass());
      expect(condition("DeliveryReady")?.reason).toBe("DeliveryRefused");
      expect(result.requeueAfterMs).toBe(60_000);
      expect(deliveredData()).toEqual({ a: "b" });
    });
  }
});

describe("a MariaDBDatabase on a target cluster", () => {
  it("is provisioned on the management cluster and reads DatabaseNotPublished without a published endpoint", async () => {
    world();
    const edge = new FakeKube({ now: () => new Date(clock.now()) });
    const raw = kube.read(mariaDBDatabaseKind, TENANT, NAME);
    kube.remove(mariaDBDatabaseKind, TENANT, NAME);
    edge.put(mariaDBDatabaseKind, { metadata: { name: NAME, namespace: TENANT }, spec: raw?.["spec"] });
    for (let i = 0; i < 6; i++) {
      await pass("edge", edge);
      await sql();
    }
    expect(condition("DatabaseReady", edge)).toMatchObject({ status: "True", reason: "DatabaseProvisioned" });
    expect(condition("DeliveryReady", edge)).toMatchObject({ reason: "DatabaseNotPublished" });
    expect(delivered(edge)).toBeUndefined();
    expect(kube.all(sqlUserKind)[0]?.metadata?.labels?.["c5c3.io/mariadbdatabase-cluster"]).toBe("edge");

    const cp = kube.read(controlPlaneKind, CP_NS, "cp");
    const spec = cp?.["spec"] as { infrastructure: Record<string, unknown> };
    kube.put(controlPlaneKind, {
      ...cp,
      spec: {
        ...spec,
        infrastructure: { ...spec.infrastructure, publishedDatabaseEndpoint: "db.example.test:13306" },
      },
    });
    await converge("edge", edge);
    expect(deliveredData(edge)).toMatchObject({ host: "db.example.test", port: "13306" });
    const edgeDb = defaultDatabaseName({ cluster: "edge", namespace: TENANT, name: NAME });
    expect(deliveredData(edge)["connection"]).toContain(`@db.example.test:13306/${edgeDb}?charset=utf8`);
  });
});
