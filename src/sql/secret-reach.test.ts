// Under --secret-namespaces, a SQL object whose Secrets lie in a namespace outside the list (a User's
// password Secret, a Connection's Secrets beside it) is reported on its Ready condition, gets no
// finalizer, nothing reaches the server and not one Secret is asked for: the chart's Roles would refuse
// the request. A Database or a Grant needs no Secret and is served wherever it is; so is the deletion
// of an object that already carries its finalizer (dropping needs no password).
import { describe, expect, it } from "vitest";
import { secretKind, sqlConnectionKind, sqlDatabaseKind, sqlUserKind } from "../api/index.ts";
import { createLogger } from "../runtime/base/logging.ts";
import type { SqlServer } from "./statements/index.ts";
import { FakeKube } from "../../harness/fakes/fake-kube.ts";
import { finalizerName, sqlKind, type SqlObject } from "./backend.ts";
import { createSharedSqlDeps, sqlReconcileDeps, type SqlDeps } from "./deps.ts";
import type { Kind, KubeObject } from "../runtime/port/kube-rest.ts";
import { outOfReach, reconcileExternal, type ExternalKind } from "../external/index.ts";

/** A server that records every statement and knows nothing. */
function recordingServer(): SqlServer & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    run: async (sql) => void sent.push(sql),
    select: async <T>(sql: string) => (sent.push(sql), [] as T[]),
    login: async () => void sent.push("login"),
    close: async () => undefined,
  };
}

function world(secretNamespaces: string[]) {
  const kube = new FakeKube();
  const server = recordingServer();
  const shared = createSharedSqlDeps({ server, refs: { serve: "all" }, settings: { secretNamespaces } });
  const deps = sqlReconcileDeps(shared, kube, createLogger({ level: "fatal" }));
  return { kube, server, deps };
}

const mariaDbRef = { name: "mariadb" };
const password = { name: "pw", key: "password" };
const object = (namespace: string, spec: Record<string, unknown>) => ({
  metadata: { name: "o", namespace },
  spec: { mariaDbRef, ...spec },
});
const user = (namespace: string) =>
  object(namespace, { passwordSecretKeyRef: password, cleanupPolicy: "Delete" });
const connection = (namespace: string) =>
  object(namespace, { username: "u", passwordSecretKeyRef: password });

const readyOf = (stored: unknown) =>
  (
    stored as {
      status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
    }
  )?.status?.conditions?.find((c) => c.type === "Ready");

describe("the namespaces out of reach of a SQL object", () => {
  const asUser = (o: unknown) => sqlKind.user.schema.parse(o);
  const asConnection = (o: unknown) => sqlKind.connection.schema.parse(o);

  it("are none without a list, or for a kind that needs no Secret", () => {
    expect(outOfReach(sqlKind.user, [], asUser(user("a")))).toEqual([]);
    expect(outOfReach(sqlKind.database, ["b"], sqlKind.database.schema.parse(object("a", {})))).toEqual([]);
    const grant = sqlKind.grant.schema.parse(object("a", { username: "u", privileges: ["SELECT"] }));
    expect(outOfReach(sqlKind.grant, ["b"], grant)).toEqual([]);
  });

  it("are its own namespace for a User naming a password Secret and for every Connection", () => {
    expect(outOfReach(sqlKind.user, ["b"], asUser(user("a")))).toEqual(["a"]);
    expect(outOfReach(sqlKind.user, ["b"], asUser(object("a", {})))).toEqual([]);
    expect(outOfReach(sqlKind.connection, ["b"], asConnection(object("a", { username: "u" })))).toEqual([
      "a",
    ]);
    expect(outOfReach(sqlKind.connection, ["a"], asConnection(connection("a")))).toEqual([]);
  });
});

describe("a SQL object whose Secrets are out of reach", () => {
  it("reads SecretsOutOfReach, carries no finalizer, and neither a Secret nor the server is asked", async () => {
    const kinds: [Kind, ExternalKind<SqlDeps, SqlObject, unknown, SqlServer>, KubeObject][] = [
      [sqlUserKind, sqlKind.user, user("stray")],
      [sqlConnectionKind, sqlKind.connection, connection("stray")],
    ];
    for (const [kind, external, body] of kinds) {
      const { kube, server, deps } = world(["listed"]);
      kube.put(kind, body);
      expect(await reconcileExternal(external, deps, "stray", "o")).toEqual({});
      const stored = kube.read(kind, "stray", "o");
      expect(stored?.metadata?.finalizers ?? []).toEqual([]);
      const ready = readyOf(stored);
      expect(ready?.status).toBe("False");
      expect(ready?.reason).toBe("SecretsOutOfReach");
      expect(ready?.message).toContain('namespace "stray"');
      expect(ready?.message).toContain("rbac.secretNamespaces");
      expect(kube.calls.filter((c) => c.kind === secretKind.kind)).toEqual([]);
      expect(server.sent).toEqual([]);
    }
  });

  it("is still dropped when deleted with the finalizer an earlier pass gave it", async () => {
    const { kube, server, deps } = world(["listed"]);
    kube.put(sqlUserKind, {
      ...user("stray"),
      metadata: {
        name: "o",
        namespace: "stray",
        finalizers: [finalizerName(sqlUserKind)],
        deletionTimestamp: new Date("2026-01-01T00:00:00Z"),
      },
    });
    await reconcileExternal(sqlKind.user, deps, "stray", "o");
    expect(server.sent).toContain("DROP USER IF EXISTS `o`@`%`");
    expect(kube.read(sqlUserKind, "stray", "o")).toBeUndefined();
    expect(kube.calls.filter((c) => c.kind === secretKind.kind)).toEqual([]);
  });

  it("is a Database served wherever it is: it needs no Secret", async () => {
    const { kube, server, deps } = world(["listed"]);
    kube.put(sqlDatabaseKind, object("stray", { cleanupPolicy: "Delete" }));
    await reconcileExternal(sqlKind.database, deps, "stray", "o");
    expect(server.sent.some((s) => s.startsWith("CREATE DATABASE"))).toBe(true);
    expect(readyOf(kube.read(sqlDatabaseKind, "stray", "o"))?.reason).not.toBe("SecretsOutOfReach");
  });
});
