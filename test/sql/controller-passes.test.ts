// Whole passes of the SQL engine on the in-memory port and a server stand-in that knows databases
// only: what a pass sends, writes and returns. The real server and API server are in the .itest files.
import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { secretKind, sqlDatabaseKind, sqlUserKind } from "../../src/api/index.ts";
import { TerminalError, TransientError } from "../../src/runtime/base/errors.ts";
import { createSharedSqlDeps, sqlReconcileDeps, type SqlDeps, sqlKind } from "../../src/sql/index.ts";
import { reconcileExternal } from "../../src/external/index.ts";
import { FakeClock } from "../../harness/fakes/fake-clock.ts";
import { FakeKube } from "../../harness/fakes/fake-kube.ts";
import { DatabaseServer } from "./database-server.ts";

const lines: string[] = [];
const logger = pino({ level: "debug", base: undefined }, { write: (l: string) => void lines.push(l) });

function world(refs: "all" | "none" = "all") {
  const clock = new FakeClock();
  const kube = new FakeKube({ now: () => new Date(clock.now()) });
  const server = new DatabaseServer();
  const shared = createSharedSqlDeps({
    server,
    refs: { serve: refs },
    settings: { verificationPeriodMs: 60_000, waitingRetryMs: 1_000, transientRetryMs: 5_000 },
    clock,
  });
  const deps: SqlDeps = sqlReconcileDeps(shared, kube, logger);
  return { clock, kube, server, deps };
}

const database = (spec: Record<string, unknown>) => ({
  metadata: { name: "cinder", namespace: "openstack" },
  spec: { mariaDbRef: { name: "mariadb" }, characterSet: "utf8", collate: "utf8_general_ci", ...spec },
});

const ready = (kube: FakeKube) =>
  (
    kube.read(sqlDatabaseKind, "openstack", "cinder")?.status as {
      conditions?: { status: string; message: string }[];
    }
  )?.conditions?.[0];

describe("a pass of the SQL engine", () => {
  it("creates, then sends nothing and writes nothing until the verification is due", async () => {
    const { clock, kube, server, deps } = world();
    kube.put(sqlDatabaseKind, database({ name: "cinder_db" }));
    expect(await reconcileExternal(sqlKind.database, deps, "openstack", "cinder")).toEqual({
      requeueAfterMs: 60_000,
    });
    expect(server.databases.get("cinder_db")).toBe("utf8");
    expect(ready(kube)).toMatchObject({ status: "True", message: "created database cinder_db" });
    const sent = server.sent.length;
    const writes = kube.writes().length;

    clock.advance(10_000);
    expect(await reconcileExternal(sqlKind.database, deps, "openstack", "cinder")).toEqual({
      requeueAfterMs: 50_000,
    });
    expect(server.sent).toHaveLength(sent);
    expect(kube.writes()).toHaveLength(writes);

    clock.advance(50_000);
    server.databases.delete("cinder_db");
    await reconcileExternal(sqlKind.database, deps, "openstack", "cinder");
    expect(server.databases.has("cinder_db")).toBe(true);
    expect(lines.some((l) => l.includes("drift: repaired on the server"))).toBe(true);
  });

  it("puts a finalizer on under Delete only, and drops on deletion", async () => {
    const { kube, server, deps } = world();
    kube.put(sqlDatabaseKind, database({ cleanupPolicy: "Skip" }));
    await reconcileExternal(sqlKind.database, deps, "openstack", "cinder");
    expect(kube.read(sqlDatabaseKind, "openstack", "cinder")?.metadata?.finalizers ?? []).toEqual([]);

    const stored = kube.read(sqlDatabaseKind, "openstack", "cinder");
    kube.put(sqlDatabaseKind, {
      ...stored,
      spec: { ...(stored?.["spec"] as object), cleanupPolicy: "Delete" },
    });
    await reconcileExternal(sqlKind.database, deps, "openstack", "cinder");
    expect(kube.read(sqlDatabaseKind, "openstack", "cinder")?.metadata?.finalizers).toEqual([
      "mariadb.osh.openstack.org/database-cleanup",
    ]);
    await kube.delete(sqlDatabaseKind, { namespace: "openstack", name: "cinder" });
    await reconcileExternal(sqlKind.database, deps, "openstack", "cinder");
    expect(server.sent.at(-1)).toBe("DROP DATABASE IF EXISTS `cinder`");
    expect(kube.read(sqlDatabaseKind, "openstack", "cinder")).toBeUndefined();
  });

  it("leaves an object it does not serve without status, finalizer or statement", async () => {
    const { kube, server, deps } = world("none");
    kube.put(sqlDatabaseKind, database({ cleanupPolicy: "Delete" }));
    expect(await reconcileExternal(sqlKind.database, deps, "openstack", "cinder")).toEqual({});
    expect(kube.writes()).toEqual([]);
    expect(server.sent).toEqual([]);
  });

  it("refuses a field it cannot honour, naming it, without a statement", async () => {
    const { kube, server, deps } = world();
    kube.put(sqlUserKind, {
      metadata: { name: "nova", namespace: "openstack" },
      spec: { mariaDbRef: { name: "mariadb", uid: "1234" } },
    });
    await expect(reconcileExternal(sqlKind.user, deps, "openstack", "nova")).rejects.toThrow(TerminalError);
    const status = kube.read(sqlUserKind, "openstack", "nova")?.status as {
      conditions: { message: string }[];
    };
    expect(status.conditions[0]?.message).toMatch(/^spec\.mariaDbRef\.uid is set/);
    expect(server.sent).toEqual([]);
  });

  it("reports a server out of reach as transient, and recovers without help", async () => {
    const { kube, server, deps } = world();
    kube.put(sqlDatabaseKind, database({}));
    server.down = true;
    const error = await reconcileExternal(sqlKind.database, deps, "openstack", "cinder").catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).retryAfterMs).toBe(5_000);
    expect(ready(kube)).toMatchObject({ status: "False", message: "connect ECONNREFUSED (ECONNREFUSED)" });
    server.down = false;
    await reconcileExternal(sqlKind.database, deps, "openstack", "cinder");
    expect(ready(kube)).toMatchObject({ status: "True" });
  });

  it("says PasswordRefused, naming the policy, when the server's validation refuses the password", async () => {
    const { kube, server, deps } = world();
    const password = "Wk1-not-enough";
    kube.put(secretKind, {
      metadata: { name: "pw", namespace: "openstack" },
      data: { password: Buffer.from(password).toString("base64") },
    });
    kube.put(sqlUserKind, {
      metadata: { name: "nova", namespace: "openstack" },
      spec: { mariaDbRef: { name: "mariadb" }, passwordSecretKeyRef: { name: "pw", key: "password" } },
    });
    server.validating = true;
    const error = await reconcileExternal(sqlKind.user, deps, "openstack", "nova").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    // The password itself was offered (a hash would be refused unvalidated), and never logged or said.
    expect(server.sent.some((s) => s.includes(`IDENTIFIED BY '${password}'`))).toBe(true);
    const status = kube.read(sqlUserKind, "openstack", "nova")?.status as {
      conditions?: { status: string; reason: string; message: string }[];
    };
    expect(status.conditions?.[0]).toMatchObject({
      status: "False",
      reason: "PasswordRefused",
      message:
        "the server's password validation (simple_password_check; strict_password_validation ON) refused the password of 'nova'@'%'",
    });
    expect(lines.join("\n")).not.toContain(password);
    expect(JSON.stringify(kube.writes())).not.toContain(password);
  });

  it("honours spec.retryInterval for the wait of a missing password Secret", async () => {
    const { kube, deps } = world();
    kube.put(sqlUserKind, {
      metadata: { name: "nova", namespace: "openstack" },
      spec: {
        mariaDbRef: { name: "mariadb" },
        passwordSecretKeyRef: { name: "pw", key: "password" },
        retryInterval: "3s",
      },
    });
    expect(await reconcileExternal(sqlKind.user, deps, "openstack", "nova")).toEqual({
      requeueAfterMs: 3_000,
    });
  });
});
