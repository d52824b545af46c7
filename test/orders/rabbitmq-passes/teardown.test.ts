// Teardown of the RabbitMQVhost order in whole passes on the fake Kubernetes port: the children, the
// backup and the delivered Secret under each policy and secret-namespaces, the uid its children record
// (never adopting an earlier order's), orphans, failing steps and a ControlPlane that is gone.
import { beforeEach, describe, expect, it } from "vitest";
import {
  controlPlaneKind,
  permissionKind,
  rabbitMQVhostKind,
  secretKind,
  userKind,
  vhostKind,
} from "../../../src/api/index.ts";
import { BackupError } from "../../../src/backup/store.ts";
import { OrphanSightings } from "../../../src/orders/core/orphan-sightings.ts";
import { passwordSecretName } from "../../../src/orders/rabbitmq/naming.ts";
import type { KubeObject } from "../../../src/runtime/port/kube-rest.ts";
import { apiError } from "../../../harness/fakes/fake-kube.ts";
import { CP_NS, TENANT, b64, clock, deps, kube, names, store, unb64 } from "../pass-world.ts";
import {
  NAME,
  condition,
  converge,
  delivered,
  deliveredUser,
  order,
  pass,
  setUp,
  status,
  topology,
  world,
} from "./fixture.ts";

beforeEach(setUp);

describe("teardown on the fake port", () => {
  for (const policy of ["Retain", "Delete"] as const) {
    it(`under ${policy} removes the children, the backup and the delivered Secret, then the finalizer`, async () => {
      world({ deletionPolicy: policy });
      await converge();
      expect(store.paths.size).toBe(1);
      await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
      expect(order()?.metadata?.deletionTimestamp).toBeDefined();
      expect(await pass()).toEqual({});
      expect(order()).toBeUndefined();
      expect(store.paths.size).toBe(0);
      expect(kube.all(userKind)).toEqual([]);
      expect(kube.all(permissionKind)).toEqual([]);
      expect(kube.all(vhostKind)).toEqual([]);
      expect(kube.all(secretKind).map((s) => s.metadata?.name)).toEqual(["rabbitmq-default-user"]);
      // The Vhost CR carried the order's policy when it was deleted.
      const vhostWrites = kube
        .writes()
        .filter((c) => c.kind === "Vhost")
        .map((c) => c.op);
      expect(vhostWrites.at(-1)).toBe("delete");
    });
  }

  it("under secret-namespaces without the order's own namespace (a finalizer of an unscoped run), removes everything but the delivered Secret, never asking for a Secret there", async () => {
    world();
    await converge();
    deps.settings = { ...deps.settings, secretNamespaces: [CP_NS] };
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    const before = kube.calls.length;
    expect(await pass()).toEqual({});
    expect(order()).toBeUndefined();
    expect(store.paths.size).toBe(0);
    expect([...kube.all(userKind), ...kube.all(permissionKind), ...kube.all(vhostKind)]).toEqual([]);
    // The garbage collector takes it with the order, whose owner reference it carries.
    expect(delivered()).toBeDefined();
    const asked = kube.calls.slice(before).filter((c) => c.kind === "Secret");
    expect(asked.filter((c) => c.ref.startsWith(`${TENANT}/`))).toEqual([]);
  });

  it("under secret-namespaces without the ControlPlane's namespace, deletes nothing, keeps the finalizer and reads SecretsOutOfReach", async () => {
    world();
    await converge();
    deps.settings = { ...deps.settings, secretNamespaces: [TENANT] };
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    const before = kube.calls.length;
    expect(await pass()).toEqual({});
    expect(order()?.metadata?.finalizers).toEqual(["c5c3.io/rabbitmqvhost-teardown"]);
    const ready = condition("Ready");
    expect(ready).toMatchObject({ status: "False", reason: "SecretsOutOfReach" });
    expect(ready?.message).toContain(`namespace "${CP_NS}"`);
    expect(ready?.message).toContain("c5c3.io/rabbitmqvhost-teardown");
    expect(ready?.message).toContain(`c5c3.io/rabbitmqvhost-namespace=${TENANT}`);
    expect(store.paths.size).toBe(1);
    expect(kube.all(userKind)).not.toEqual([]);
    expect(kube.all(vhostKind)).not.toEqual([]);
    const writes = kube.calls.slice(before).filter((c) => c.op !== "get" && c.op !== "list");
    expect(writes.map((c) => `${c.op} ${c.kind}`)).toEqual(["patchStatus RabbitMQVhost"]);
    expect(kube.calls.slice(before).filter((c) => c.kind === "Secret")).toEqual([]);
  });

  // The teardown says Deleted from its release step, not when a pass asks for no requeue: a teardown
  // held by SecretsOutOfReach asks for none and removed nothing.
  it("says Deleting as it starts, and Deleted only from the step that released the finalizer", async () => {
    world();
    await converge();
    const said: string[] = [];
    deps.teardownEvents = {
      deleting: async () => void said.push("Deleting"),
      deleted: async () => void said.push("Deleted"),
    };
    deps.settings = { ...deps.settings, secretNamespaces: [TENANT] };
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    expect(await pass()).toEqual({});
    expect(condition("Ready")?.reason).toBe("SecretsOutOfReach");
    expect(said).toEqual(["Deleting"]);
    deps.settings = { ...deps.settings, secretNamespaces: [TENANT, CP_NS] };
    expect(await pass()).toEqual({});
    expect(order()).toBeUndefined();
    expect(said).toEqual(["Deleting", "Deleting", "Deleted"]);
  });

  it("records its uid on every child, and never adopts the children an earlier order of its name made", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    const uid = order()?.metadata?.uid ?? "";
    for (const kind of [vhostKind, userKind, permissionKind]) {
      for (const child of kube.all(kind)) {
        expect(child.metadata?.annotations?.["c5c3.io/rabbitmqvhost-uid"]).toBe(uid);
      }
    }
    // The order is deleted past its teardown and created again under the same name: a new uid.
    const leftover = { users: names(userKind), permissions: names(permissionKind) };
    const oldPassword = unb64((delivered()?.["data"] as Record<string, string>)["password"]);
    const o = order();
    kube.remove(rabbitMQVhostKind, TENANT, NAME);
    // The garbage collector takes the delivered Secret with the order it names as owner.
    kube.remove(secretKind, TENANT, `${NAME}-credentials`);
    kube.put(rabbitMQVhostKind, {
      ...o,
      metadata: { name: NAME, namespace: TENANT, uid: "the-new-order" },
      status: undefined,
    } as never);
    await pass(); // the finalizer
    const blocked = await pass();
    expect(blocked.error ?? "").toContain("removing children an earlier order of the same name made");
    // The condition names each leftover and the order that made it.
    expect(condition("VhostReady")).toMatchObject({ status: "False", reason: "VhostError" });
    expect(condition("VhostReady")?.message).toContain(
      `User ${CP_NS}/${leftover.users[0]}, made by order uid ${uid}`,
    );
    expect(condition("VhostReady")?.message).toContain(
      `Permission ${CP_NS}/${leftover.permissions[0]}, made by order uid ${uid}`,
    );
    expect(names(userKind)).toEqual([]);
    expect(names(permissionKind)).toEqual([]);
    await converge();
    expect(names(userKind)).toEqual(leftover.users);
    expect(names(permissionKind)).toEqual(leftover.permissions);
    for (const child of [...kube.all(userKind), ...kube.all(permissionKind), ...kube.all(vhostKind)]) {
      expect(child.metadata?.annotations?.["c5c3.io/rabbitmqvhost-uid"]).toBe("the-new-order");
    }
    expect(deliveredUser()).toBe(`${vhost}-v1`);
    // The Vhost CR was taken over, never deleted: under Retain the vhost's data on the broker stays.
    expect(kube.writes().filter((w) => w.kind === "Vhost" && w.op === "delete")).toEqual([]);
    // A fresh password: the earlier order's credentials went with its children.
    expect(unb64((delivered()?.["data"] as Record<string, string>)["password"])).not.toBe(oldPassword);
  });

  it("adopts children that record no uid (made before children recorded it) without a rotation, and stamps them", async () => {
    world();
    await converge();
    const uid = order()?.metadata?.uid ?? "";
    const password = () => unb64((delivered()?.["data"] as Record<string, string>)["password"]);
    const deliveredBefore = password();
    for (const kind of [vhostKind, userKind, permissionKind, secretKind]) {
      for (const child of kube.all(kind)) {
        const { annotations: _, ...metadata } = child.metadata ?? {};
        kube.put(kind, { ...child, metadata: { ...metadata, annotations: { "someone.else/note": "kept" } } });
      }
    }
    const before = { generation: status()["passwordGeneration"], users: names(userKind) };
    await converge();
    expect(status()["passwordGeneration"]).toBe(before.generation);
    expect(names(userKind)).toEqual(before.users);
    expect(password()).toBe(deliveredBefore);
    const children = [vhostKind, userKind, permissionKind, secretKind].flatMap((kind) =>
      kube
        .all(kind)
        .filter((o) => o.metadata?.namespace === CP_NS && o.metadata?.name?.startsWith(`${NAME}-`)),
    );
    expect(children.map((c) => c.kind).sort()).toEqual(["Permission", "Secret", "User", "Vhost"]);
    for (const child of children) {
      expect(child.metadata?.annotations).toMatchObject({
        "c5c3.io/rabbitmqvhost-uid": uid,
        "someone.else/note": "kept",
      });
    }
    // The password Secret kept its password: stamped, never rewritten.
    const secret = children.find((c) => c.kind === "Secret");
    expect(unb64((secret?.["data"] as Record<string, string>)["password"])).toBe(deliveredBefore);
    // Stamped once: the next pass writes nothing.
    const writes = kube.writes().length;
    await pass();
    expect(kube.writes().length).toBe(writes);
  });

  it("never adopts a password Secret an earlier order of its name left behind: deleted, and a fresh one made", async () => {
    world();
    const name = passwordSecretName({ cluster: "", namespace: TENANT, name: NAME }, 1);
    // Restored from an older snapshot: the earlier order's labels, names and recorded uid.
    kube.put(secretKind, {
      metadata: {
        name,
        namespace: CP_NS,
        labels: {
          "c5c3.io/rabbitmqvhost-name": NAME,
          "c5c3.io/rabbitmqvhost-namespace": TENANT,
          "c5c3.io/rabbitmqvhost-cluster": "",
          "rabbitmq.com/topology-operator": "true",
        },
        annotations: { "c5c3.io/rabbitmqvhost-uid": "an-earlier-order" },
      },
      data: { username: b64(`${NAME}-user`), password: b64("the-earlier-orders") },
    });
    await pass(); // the finalizer
    await pass(); // the Vhost CR
    topology();
    const blocked = await pass();
    expect(blocked.error).toContain(`Secret ${CP_NS}/${name}, made by order uid an-earlier-order`);
    expect(condition("VhostReady")?.message).toContain("made by order uid an-earlier-order");
    expect(kube.all(userKind)).toEqual([]);
    await converge();
    const secret = kube.read(secretKind, CP_NS, name);
    expect(secret?.metadata?.annotations?.["c5c3.io/rabbitmqvhost-uid"]).toBe(order()?.metadata?.uid);
    const password = unb64((delivered()?.["data"] as Record<string, string>)["password"]);
    expect(password).not.toBe("the-earlier-orders");
    expect(unb64((secret?.["data"] as Record<string, string>)["password"])).toBe(password);
  });

  it("removes what an order whose finalizer was stripped left behind, after the delay", async () => {
    world();
    await converge();
    deps.orphans = { delayMs: 600_000, sightings: new OrphanSightings() };
    const o = order();
    kube.put(rabbitMQVhostKind, { ...o, metadata: { ...o?.metadata, finalizers: [] } } as never);
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    expect(order()).toBeUndefined();
    // The order may come back (a restore): nothing goes before the delay.
    expect(await pass()).toEqual({ requeueAfterMs: 600_000 });
    expect(kube.all(userKind)).toHaveLength(1);
    // A wall clock stepped forward past the delay brings nothing closer: the delay is this process's own.
    clock.stepWall(3_600_000);
    clock.advance(599_000);
    expect(await pass()).toEqual({ requeueAfterMs: 1_000 });
    expect(kube.all(userKind)).toHaveLength(1);
    clock.advance(1_000);
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(kube.all(userKind)).toEqual([]);
    expect(kube.all(permissionKind)).toEqual([]);
    expect(kube.all(vhostKind)).toEqual([]);
    expect(store.paths.size).toBe(0);
    // The password Secrets go once no User reads them.
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(kube.all(secretKind).map((s) => s.metadata?.name)).toEqual([
      "rabbitmq-default-user",
      `${NAME}-credentials`,
    ]);
    expect(await pass()).toEqual({});
  });

  it("goes on past a failing step, says which step blocks, and finishes once the fault is gone", async () => {
    world();
    await converge();
    store.failure = new BackupError("unreachable", "OpenBao is unreachable (test)");
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    const blocked = await pass();
    expect(blocked.error).toContain("purging the backup failed");
    // The steps after the purge went ahead.
    expect(kube.all(userKind)).toEqual([]);
    expect(delivered()).toBeUndefined();
    expect(order()?.metadata?.finalizers).toEqual(["c5c3.io/rabbitmqvhost-teardown"]);
    expect(condition("Ready")).toMatchObject({ status: "False", reason: "Deleting" });
    expect(condition("Ready")?.message).toContain("purging the backup failed: OpenBao is unreachable (test)");
    store.failure = undefined;
    expect(await pass()).toEqual({});
    expect(order()).toBeUndefined();
    expect(store.paths.size).toBe(0);
  });

  it("with the ControlPlane gone, releases the finalizer in the pass that issued the deletes, even when the backup cannot be purged", async () => {
    world();
    await converge();
    kube.remove(controlPlaneKind, CP_NS, "cp");
    store.failure = new BackupError("unreachable", "OpenBao is unreachable (test)");
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    expect(await pass()).toEqual({});
    expect(order()).toBeUndefined();
  });

  for (const [what, failing] of [
    ["User", userKind],
    ["Permission", permissionKind],
    ["Vhost", vhostKind],
    ["password Secret", secretKind],
  ] as const) {
    it(`with the ControlPlane gone, keeps the finalizer while a ${what} delete fails, and releases it once the delete goes through`, async () => {
      world();
      await converge();
      kube.remove(controlPlaneKind, CP_NS, "cp");
      const target = kube
        .all(failing)
        .find((o) => o.metadata?.namespace === CP_NS && o.metadata?.name?.startsWith(`${NAME}-`));
      const name = target?.metadata?.name ?? "";
      expect(name).not.toBe("");
      await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
      kube.failNext("delete", failing, apiError(500, "InternalError", "etcd timeout (test)"), { name });
      const blocked = await pass();
      expect(blocked.error).toContain("failed: HTTP 500: etcd timeout (test)");
      expect(order()?.metadata?.finalizers).toEqual(["c5c3.io/rabbitmqvhost-teardown"]);
      expect(condition("Ready")).toMatchObject({ status: "False", reason: "Deleting" });
      expect(condition("Ready")?.message).toMatch(/deleting the .* failed: HTTP 500: etcd timeout \(test\)/);
      expect(kube.read(failing, CP_NS, name)).toBeDefined();
      // The delete goes through on the retry: released in that pass.
      expect(await pass()).toEqual({});
      expect(order()).toBeUndefined();
      expect(kube.read(failing, CP_NS, name)).toBeUndefined();
    });
  }

  it("with the ControlPlane gone, keeps the finalizer while the children cannot be listed", async () => {
    world();
    await converge();
    kube.remove(controlPlaneKind, CP_NS, "cp");
    kube.failNext("list", userKind, apiError(500, "etcd leader changed (test)"));
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    const blocked = await pass();
    expect(blocked.error).toContain("listing the children failed");
    expect(order()?.metadata?.finalizers).toEqual(["c5c3.io/rabbitmqvhost-teardown"]);
    expect(condition("Ready")).toMatchObject({ status: "False", reason: "Deleting" });
    expect(condition("Ready")?.message).toContain(
      "listing the children failed: HTTP 500: etcd leader changed (test)",
    );
    expect(kube.all(userKind)).toHaveLength(1);
    // Listed on the next pass: the deletes go out and the finalizer is released.
    expect(await pass()).toEqual({});
    expect(order()).toBeUndefined();
    expect(kube.all(userKind)).toEqual([]);
  });

  it("a policy changed just before the delete reaches the Vhost CR before it goes", async () => {
    world();
    await converge();
    const raw = order() as KubeObject;
    kube.put(rabbitMQVhostKind, { ...raw, spec: { ...(raw["spec"] as object), deletionPolicy: "Delete" } });
    let policyAtDelete: unknown;
    const vhostName = kube.all(vhostKind)[0]?.metadata?.name ?? "";
    const originalDelete = kube.delete.bind(kube);
    kube.delete = async (kind, ref) => {
      if (kind.kind === "Vhost") {
        policyAtDelete = (kube.read(vhostKind, CP_NS, vhostName)?.["spec"] as { deletionPolicy?: string })
          ?.deletionPolicy;
      }
      return originalDelete(kind, ref);
    };
    // An apply names every field the manager owns: the uid annotation too, or the API server drops it.
    const appliedAnnotations: unknown[] = [];
    const originalApply = kube.apply.bind(kube);
    kube.apply = async (kind, object) => {
      if (kind.kind === "Vhost") appliedAnnotations.push(object.metadata?.annotations);
      return originalApply(kind, object);
    };
    await originalDelete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    await pass();
    expect(policyAtDelete).toBe("delete");
    expect(appliedAnnotations).toEqual([{ "c5c3.io/rabbitmqvhost-uid": raw.metadata?.uid }]);
  });
});
