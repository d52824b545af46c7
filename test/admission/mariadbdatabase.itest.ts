// The MariaDBDatabase admission corpus: RabbitMQVhost's rules and messages (seed 001) on the order's
// own fields, databaseName's default, limits and immutability, the stored defaults and the printer
// columns, on both clusters (a target cluster serves the kind from the same CRD); and the ControlPlane's
// spec.infrastructure.database with its published endpoint.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controlPlaneKind, mariaDBDatabaseKind as ref } from "../../src/api/index.ts";
import { freshNamespace, testCluster } from "../../harness/world/kube.ts";
import {
  create,
  expectOutcome,
  installKind,
  kubectl,
  outcome,
  patchStatus,
  read,
  update,
  type Expectation,
} from "../../harness/world/admission.ts";

function order(namespace: string, name: string, spec: Record<string, unknown>) {
  return { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name, namespace }, spec };
}

const scaffold = (extra: Record<string, unknown> = {}) => ({
  controlPlaneRef: { name: "cp-absent" },
  ...extra,
});

const createCases: [string, string, Record<string, unknown>, Expectation][] = [
  [
    "passwordGeneration 0",
    "g0",
    scaffold({ passwordGeneration: 0 }),
    ["passwordGeneration", "should be greater than or equal to 1"],
  ],
  ["name of 64 bytes", "n".repeat(64), scaffold(), ["metadata.name must be at most 63 bytes"]],
  ["name of 63 bytes", "m".repeat(63), scaffold(), "admitted"],
  [
    "deletionPolicy Drop",
    "drop",
    scaffold({ deletionPolicy: "Drop" }),
    ["deletionPolicy", "Unsupported value"],
  ],
  ["deletionPolicy Delete", "delete", scaffold({ deletionPolicy: "Delete" }), "admitted"],
  [
    "interval 30s",
    "i30s",
    scaffold({ rotation: { interval: "30s", gracePeriod: "0s" } }),
    ["rotation.interval is 0s or at least 1m"],
  ],
  [
    "interval 1h, grace 1h",
    "i1h",
    scaffold({ rotation: { interval: "1h", gracePeriod: "1h" } }),
    ["rotation.gracePeriod must be shorter than rotation.interval"],
  ],
  [
    "grace -1h",
    "gneg",
    scaffold({ rotation: { gracePeriod: "-1h" } }),
    ["rotation.gracePeriod is not negative"],
  ],
  [
    "interval 87601h",
    "ilong",
    scaffold({ rotation: { interval: "87601h" } }),
    ["rotation.interval is at most 87600h"],
  ],
  ["schedule off", "off", scaffold({ rotation: { interval: "0s" } }), "admitted"],
  ["no ref", "no-ref", {}, ["controlPlaneRef", "Required value"]],
  ["databaseName nova_cell0", "cell0", scaffold({ databaseName: "nova_cell0" }), "admitted"],
  ["databaseName of 64 characters", "db64", scaffold({ databaseName: "d".repeat(64) }), "admitted"],
  [
    "databaseName of 65 characters",
    "db65",
    scaffold({ databaseName: "d".repeat(65) }),
    ["databaseName", "Too long"],
  ],
  [
    "databaseName with a dash",
    "dash",
    scaffold({ databaseName: "nova-cell0" }),
    ["databaseName", "should match"],
  ],
  [
    "databaseName with a backtick",
    "tick",
    scaffold({ databaseName: "a`b" }),
    ["databaseName", "should match"],
  ],
  [
    "empty databaseName",
    "empty",
    scaffold({ databaseName: "" }),
    ["databaseName", "should be at least 1 chars long"],
  ],
  ...["mysql", "information_schema", "Performance_Schema", "sys", "vhost_broker"].map(
    (name, i): [string, string, Record<string, unknown>, Expectation] => [
      `databaseName ${name}, the server's own`,
      `sys${i}`,
      scaffold({ databaseName: name }),
      ["databaseName names one of the server's own schemas"],
    ],
  ),
  ["databaseName mysql_data", "mysqldata", scaffold({ databaseName: "mysql_data" }), "admitted"],
  [
    "databaseName in the shape of another order's derived name",
    "squat",
    scaffold({ databaseName: `nova_cell0_${"0123456789abcdef".repeat(2)}` }),
    ["the shape of the name derived for another order"],
  ],
  ["a dotted name without databaseName", "a.b", scaffold(), ["metadata.name contains '.'"]],
  ["a dotted name with databaseName", "c.d", scaffold({ databaseName: "c_d" }), "admitted"],
  // Issue 44: a nanosecond timestamp is refused; the bound keeps every rotation after it exact.
  [
    "passwordGeneration above 10^15",
    "nanos",
    scaffold({ passwordGeneration: 1733000000000000000 }),
    ["passwordGeneration", "should be less than or equal to"],
  ],
  ["passwordGeneration 10^15", "micros", scaffold({ passwordGeneration: 1e15 }), "admitted"],
];

describe.each(["management", "target"] as const)(
  "MariaDBDatabase admission on the %s cluster",
  (clusterName) => {
    const cluster = testCluster(clusterName);
    let ns = "";

    beforeAll(async () => {
      await installKind(cluster, ref);
      ns = await freshNamespace(cluster, "admission-mdb");
    });

    afterAll(async () => {
      await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
    });

    it.each(createCases)("case %s", async (_case, name, spec, expected) => {
      expectOutcome(await outcome(create(cluster, ref, ns, order(ns, name, spec))), expected);
    });

    it("freezes the ref and databaseName, declared or defaulted; passwordGeneration only increases", async () => {
      const name = "frozen";
      expectOutcome(
        await outcome(create(cluster, ref, ns, order(ns, name, scaffold({ passwordGeneration: 2 })))),
        "admitted",
      );
      const change = (edit: (spec: Record<string, unknown>) => void) =>
        outcome(update(cluster, ref, ns, name, edit));
      const refOf = (spec: Record<string, unknown>) => spec.controlPlaneRef as Record<string, unknown>;
      expectOutcome(await change((s) => (refOf(s).name = "cp-other")), [
        "controlPlaneRef.name is immutable; delete and re-create the MariaDBDatabase to move it to another ControlPlane",
      ]);
      expectOutcome(await change((s) => (refOf(s).namespace = "openstack")), [
        "controlPlaneRef.namespace is immutable",
      ]);
      expectOutcome(await change((s) => (s.passwordGeneration = 1)), [
        "passwordGeneration may only increase",
      ]);
      expectOutcome(await change((s) => (s.databaseName = "frozen")), ["databaseName is immutable"]);
      expectOutcome(await change((s) => (s.passwordGeneration = 3)), "admitted");
      expectOutcome(await change((s) => (s.deletionPolicy = "Delete")), "admitted");

      const named = "named";
      await create(cluster, ref, ns, order(ns, named, scaffold({ databaseName: "named_db" })));
      expectOutcome(await outcome(update(cluster, ref, ns, named, (s) => (s.databaseName = "other"))), [
        "databaseName is immutable",
      ]);
      expectOutcome(await outcome(update(cluster, ref, ns, named, (s) => delete s.databaseName)), [
        "databaseName is immutable",
      ]);
    });

    it("stores the defaults as written and accepts the status the operator writes", async () => {
      await create(cluster, ref, ns, order(ns, "defaults", { controlPlaneRef: { name: "cp" } }));
      expect((await read(cluster, ref, ns, "defaults")).spec).toEqual({
        controlPlaneRef: { name: "cp" },
        passwordGeneration: 1,
        rotation: { interval: "720h", gracePeriod: "24h" },
        deletionPolicy: "Retain",
      });
      const status = {
        conditions: [
          {
            type: "DatabaseReady",
            status: "True",
            reason: "DatabaseProvisioned",
            message: "",
            lastTransitionTime: "2026-01-01T00:00:00Z",
          },
          {
            type: "Ready",
            status: "True",
            reason: "AllReady",
            message: "",
            lastTransitionTime: "2026-01-01T00:00:00Z",
          },
        ],
        observedGeneration: 1,
        database: "defaults",
        username: "defaults-0123abcd-v1",
        host: "mariadb.openstack.svc",
        port: 3306,
        backend: "mariadb",
        passwordGeneration: 1,
        secretName: "defaults-credentials",
        secretKeys: [
          "connection",
          "host",
          "port",
          "database",
          "username",
          "password",
          "database.conf",
          "ca.crt",
        ],
      };
      await patchStatus(cluster, ref, ns, "defaults", status);
      expect((await read(cluster, ref, ns, "defaults")).status).toEqual(status);
    });

    it("shows Ready, ControlPlane, Database, Server, Migration, Generation, NextRotation and Age in kubectl get", async () => {
      const table = await kubectl(cluster, ["get", ref.plural, "-n", ns, "defaults"]);
      const [header, row] = table.trim().split("\n");
      expect(header?.split(/\s+/)).toEqual([
        "NAME",
        "READY",
        "CONTROLPLANE",
        "DATABASE",
        "SERVER",
        "MIGRATION",
        "GENERATION",
        "NEXTROTATION",
        "AGE",
      ]);
      // No migration under way: its cell is empty.
      expect(row?.split(/\s+/).slice(0, 6)).toEqual(["defaults", "True", "cp", "defaults", "mariadb", "1"]);
    });
  },
);

describe("ControlPlane spec.infrastructure.database", () => {
  const cluster = testCluster("management");
  let ns = "";
  const cp = (name: string, spec: Record<string, unknown>) => ({
    apiVersion: controlPlaneKind.apiVersion,
    kind: controlPlaneKind.kind,
    metadata: { name, namespace: ns },
    spec,
  });
  const database = { clusterRef: { name: "mariadb" }, secretRef: { name: "mariadb-admin" } };

  beforeAll(async () => {
    await installKind(cluster, controlPlaneKind);
    ns = await freshNamespace(cluster, "admission-cpdb");
  });

  afterAll(async () => {
    await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it.each([
    ["a managed MariaDB", { database }, "admitted"],
    [
      "without its Secret",
      { database: { clusterRef: { name: "mariadb" } } },
      ["secretRef", "Required value"],
    ],
    ["without its MariaDB", { database: { secretRef: { name: "s" } } }, ["clusterRef", "Required value"]],
    ["a published endpoint", { database, publishedDatabaseEndpoint: "db.example.test:3306" }, "admitted"],
    ["a published IPv6 endpoint", { publishedDatabaseEndpoint: "[fd00::1]:3306" }, "admitted"],
    [
      "a published endpoint without port",
      { publishedDatabaseEndpoint: "db.example.test" },
      ["publishedDatabaseEndpoint must be host:port"],
    ],
    [
      "a published endpoint on port 0",
      { publishedDatabaseEndpoint: "db:0" },
      ["publishedDatabaseEndpoint must be host:port"],
    ],
  ] as [string, Record<string, unknown>, Expectation][])("%s", async (name, infrastructure, expected) => {
    const cpName = name
      .replaceAll(" ", "-")
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, "");
    expectOutcome(
      await outcome(create(cluster, controlPlaneKind, ns, cp(cpName, { infrastructure }))),
      expected,
    );
  });

  it("keeps a declared database declared", async () => {
    await create(cluster, controlPlaneKind, ns, cp("kept", { infrastructure: { database } }));
    expectOutcome(
      await outcome(
        update(
          cluster,
          controlPlaneKind,
          ns,
          "kept",
          (s) => delete (s.infrastructure as Record<string, unknown>).database,
        ),
      ),
      ["spec.infrastructure.database cannot be removed once declared"],
    );
  });
});
