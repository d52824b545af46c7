// The built-in SQL controller's passes through the gatekeeper, on the fake port and a server stand-in
// that records its statements: plugins key a kind by its group and kind, so a hook for RabbitMQ's User
// never sees a SQL User; a rejected SQL User sends nothing and says why in Ready; a deletion goes
// ahead whatever a plugin throws.
import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { sqlUserKind } from "../../src/api/index.ts";
import { GATEKEEPER_API_VERSION, type GatekeeperPlugin } from "../../src/gatekeeper/api.ts";
import { Gatekeeper } from "../../src/gatekeeper/gatekeeper.ts";
import { gatedKindName } from "../../src/gatekeeper/kinds.ts";
import { TransientError } from "../../src/runtime/base/errors.ts";
import { createSharedSqlDeps, sqlReconcileDeps, sqlKind } from "../../src/sql/index.ts";
import { reconcileExternal } from "../../src/external/index.ts";
import { FakeKube } from "../../harness/fakes/fake-kube.ts";
import { DatabaseServer } from "../sql/database-server.ts";
import { RecordingLog } from "./support.ts";

const namespace = "openstack";

/** A plugin that refuses every object of `kind` at entry, and records whom it saw. */
function refusing(kind: "User" | "User.mariadb.osh.openstack.org", seen: string[]): GatekeeperPlugin {
  return {
    apiVersion: GATEKEEPER_API_VERSION,
    name: "no-users",
    validating: {
      [kind]: {
        entry(_context: unknown, object: { metadata: { name?: string } }) {
          seen.push(object.metadata.name ?? "");
          throw new Error("no accounts on this platform");
        },
      },
    },
  };
}

function world(plugin: GatekeeperPlugin) {
  const kube = new FakeKube();
  const server = new DatabaseServer();
  const gatekeeper = new Gatekeeper({
    plugins: { mandatory: [], default: [], custom: [plugin] },
    log: new RecordingLog(),
    clock: { now: () => 0, monotonic: () => 0 },
  });
  const shared = createSharedSqlDeps({ server, refs: { serve: "all" }, gatekeeper });
  return { kube, server, deps: sqlReconcileDeps(shared, kube, pino({ level: "silent" })) };
}

const user = (spec: Record<string, unknown> = {}) => ({
  metadata: { name: "nova", namespace },
  spec: { mariaDbRef: { name: "mariadb" }, ...spec },
});

const readyOf = (kube: FakeKube) =>
  (kube.read(sqlUserKind, namespace, "nova")?.status as { conditions?: object[] } | undefined)
    ?.conditions?.[0];

describe("a SQL kind through the gatekeeper", () => {
  it("is known by its group and kind: RabbitMQ's User is another kind", () => {
    expect(gatedKindName(sqlUserKind)).toBe("User.mariadb.osh.openstack.org");
    expect(gatedKindName({ group: "rabbitmq.com", kind: "User" })).toBe("User");
  });

  it("a hook for RabbitMQ's User never sees a SQL User", async () => {
    const seen: string[] = [];
    const { kube, server, deps } = world(refusing("User", seen));
    kube.put(sqlUserKind, user());
    await reconcileExternal(sqlKind.user, deps, namespace, "nova");
    expect(seen).toEqual([]);
    expect(readyOf(kube)).toMatchObject({ status: "True", reason: "Reconciled" });
    expect(server.sent.length).toBeGreaterThan(0);
  });

  it("a rejected SQL User sends nothing and reads Ready False GatekeeperRejected", async () => {
    const seen: string[] = [];
    const { kube, server, deps } = world(refusing("User.mariadb.osh.openstack.org", seen));
    kube.put(sqlUserKind, user({ cleanupPolicy: "Delete" }));
    const error = await reconcileExternal(sqlKind.user, deps, namespace, "nova").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect(seen).toEqual(["nova"]);
    expect(readyOf(kube)).toMatchObject({
      status: "False",
      reason: "GatekeeperRejected",
      message:
        'gatekeeper plugin "no-users" rejected this User.mariadb.osh.openstack.org: no accounts on this platform',
    });
    expect(kube.read(sqlUserKind, namespace, "nova")?.metadata?.finalizers ?? []).toEqual([]);
    expect(server.sent).toEqual([]);
  });

  it("a deletion goes ahead whatever a plugin throws at entry", async () => {
    const seen: string[] = [];
    const { kube, server, deps } = world(refusing("User.mariadb.osh.openstack.org", seen));
    kube.put(sqlUserKind, {
      ...user({ cleanupPolicy: "Delete" }),
      metadata: { name: "nova", namespace, finalizers: ["mariadb.osh.openstack.org/user-cleanup"] },
    });
    await kube.delete(sqlUserKind, { namespace, name: "nova" });
    await reconcileExternal(sqlKind.user, deps, namespace, "nova");
    expect(seen).toEqual(["nova"]);
    expect(kube.read(sqlUserKind, namespace, "nova")).toBeUndefined();
    expect(server.sent.some((s) => s.startsWith("DROP USER"))).toBe(true);
  });
});
