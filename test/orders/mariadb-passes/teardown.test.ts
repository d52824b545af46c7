// Teardown of the MariaDBDatabase order in whole passes on the fake Kubernetes port: the Database under
// each policy, every User and Grant, the backup and the Secrets; secret-namespaces; never adopting an
// earlier order's children, and reattaching to its Database after a Retain deletion.
import { beforeEach, describe, expect, it } from "vitest";
import {
  mariaDBDatabaseKind,
  secretKind,
  sqlDatabaseKind,
  sqlGrantKind,
  sqlUserKind,
} from "../../../src/api/index.ts";
import { CP_NS, TENANT, deps, kube, names, store } from "../pass-world.ts";
import {
  NAME,
  condition,
  converge,
  delivered,
  deliveredData,
  order,
  pass,
  setUp,
  sql,
  user,
  world,
} from "./fixture.ts";

beforeEach(setUp);

describe("teardown of a MariaDBDatabase on the fake port", () => {
  for (const [policy, cleanup] of [
    ["Retain", "Skip"],
    ["Delete", "Delete"],
  ] as const) {
    it(`under ${policy} deletes the Database with cleanupPolicy ${cleanup}, every User and Grant, the backup and the Secrets`, async () => {
      world();
      await converge();
      const raw = order();
      kube.put(mariaDBDatabaseKind, {
        ...raw,
        spec: { ...(raw?.["spec"] as object), deletionPolicy: policy },
      });
      let cleanupAtDelete: unknown;
      let finalizersAtDelete: unknown;
      const originalDelete = kube.delete.bind(kube);
      kube.delete = async (kind, ref) => {
        if (kind.kind === "Database")
          finalizersAtDelete = kube.read(sqlDatabaseKind, ref.namespace, ref.name)?.metadata?.finalizers;
        if (kind.kind === "Database")
          cleanupAtDelete = (
            kube.read(sqlDatabaseKind, ref.namespace, ref.name)?.["spec"] as { cleanupPolicy?: string }
          )?.cleanupPolicy;
        return originalDelete(kind, ref);
      };
      await originalDelete(mariaDBDatabaseKind, { namespace: TENANT, name: NAME });
      for (let i = 0; i < 5 && order(); i++) {
        await pass();
        await sql();
      }
      expect(cleanupAtDelete).toBe(cleanup);
      // Under Delete the Database carried the SQL controller's finalizer when it was deleted, so it was dropped.
      expect(finalizersAtDelete).toEqual(
        cleanup === "Delete" ? ["mariadb.osh.openstack.org/database-cleanup"] : [],
      );
      expect(order()).toBeUndefined();
      expect(store.paths.size).toBe(0);
      expect(kube.all(sqlUserKind)).toEqual([]);
      expect(kube.all(sqlGrantKind)).toEqual([]);
      expect(kube.all(sqlDatabaseKind)).toEqual([]);
      expect(kube.all(secretKind).map((s) => s.metadata?.name)).toEqual(["mariadb-admin"]);
    });
  }

  it("under secret-namespaces with a finalizer of an unscoped run: in full but the delivered Secret without its own namespace, nothing without the ControlPlane's", async () => {
    world();
    await converge();
    deps.settings = { ...deps.settings, secretNamespaces: [TENANT] };
    await kube.delete(mariaDBDatabaseKind, { namespace: TENANT, name: NAME });
    let before = kube.calls.length;
    expect(await pass()).toEqual({});
    expect(order()?.metadata?.finalizers).toEqual(["c5c3.io/mariadbdatabase-teardown"]);
    expect(condition("Ready")).toMatchObject({ status: "False", reason: "SecretsOutOfReach" });
    expect(condition("Ready")?.message).toContain(`namespace "${CP_NS}"`);
    expect(store.paths.size).toBe(1);
    expect(kube.all(sqlUserKind)).not.toEqual([]);
    expect(kube.calls.slice(before).filter((c) => c.kind === "Secret")).toEqual([]);

    // The ControlPlane's namespace listed, the order's own not: the delivered Secret is the garbage
    // collector's, everything else goes.
    deps.settings = { ...deps.settings, secretNamespaces: [CP_NS] };
    before = kube.calls.length;
    for (let i = 0; i < 5 && order(); i++) {
      await pass();
      await sql();
    }
    expect(order()).toBeUndefined();
    expect(store.paths.size).toBe(0);
    expect([...kube.all(sqlUserKind), ...kube.all(sqlGrantKind), ...kube.all(sqlDatabaseKind)]).toEqual([]);
    expect(delivered()).toBeDefined();
    const asked = kube.calls.slice(before).filter((c) => c.kind === "Secret");
    expect(asked.filter((c) => c.ref.startsWith(`${TENANT}/`))).toEqual([]);
  });

  it("never adopts the User, Grant and password Secret an earlier order of its name made; takes over its Database", async () => {
    world();
    await converge();
    const uid = order()?.metadata?.uid ?? "";
    const mine = (kind: typeof sqlUserKind) =>
      kube
        .all(kind)
        .filter((o) => o.metadata?.namespace === CP_NS && o.metadata?.name?.startsWith(`${NAME}-`));
    for (const kind of [sqlDatabaseKind, sqlUserKind, sqlGrantKind, secretKind]) {
      for (const child of mine(kind)) {
        expect(child.metadata?.annotations?.["c5c3.io/mariadbdatabase-uid"]).toBe(uid);
      }
    }
    const oldPassword = deliveredData()["password"];
    const leftover = { users: names(sqlUserKind), grants: names(sqlGrantKind) };
    // Deleted past its teardown and created again under the same name: a new uid.
    const o = order();
    kube.remove(mariaDBDatabaseKind, TENANT, NAME);
    kube.remove(secretKind, TENANT, `${NAME}-credentials`);
    kube.put(mariaDBDatabaseKind, {
      ...o,
      metadata: { name: NAME, namespace: TENANT, uid: "the-new-order" },
      status: undefined,
    } as never);
    let blocked: { error?: string } = {};
    for (let i = 0; i < 5 && !blocked.error; i++) {
      blocked = await pass();
      await sql();
    }
    expect(blocked.error).toContain(`User ${CP_NS}/${leftover.users[0]}, made by order uid ${uid}`);
    expect(blocked.error).toContain(`Grant ${CP_NS}/${leftover.grants[0]}, made by order uid ${uid}`);
    expect(condition("DatabaseReady")).toMatchObject({ status: "False", reason: "DatabaseError" });
    expect(condition("DatabaseReady")?.message).toContain(`made by order uid ${uid}`);
    await converge();
    expect(names(sqlUserKind)).toEqual(leftover.users);
    for (const kind of [sqlDatabaseKind, sqlUserKind, sqlGrantKind, secretKind]) {
      for (const child of mine(kind)) {
        expect(child.metadata?.annotations?.["c5c3.io/mariadbdatabase-uid"]).toBe("the-new-order");
      }
    }
    expect(mine(sqlDatabaseKind)).toHaveLength(1);
    expect(deliveredData()["password"]).not.toBe(oldPassword);
  });

  it("reattaches to the same Database after a Retain deletion: the same names, a fresh first user", async () => {
    world();
    await converge();
    const before = kube.all(sqlDatabaseKind).map((d) => [d.metadata?.name, d["spec"]]);
    await kube.delete(mariaDBDatabaseKind, { namespace: TENANT, name: NAME });
    await pass();
    world();
    await converge();
    expect(kube.all(sqlDatabaseKind).map((d) => [d.metadata?.name, d["spec"]])).toEqual(before);
    expect(deliveredData()["username"]).toBe(user(1));
  });
});
