// Which order made a child, against the real management kube-apiserver: the uid annotation travels with
// every child through server-side apply (and the password Secret's create); a child an operator version
// before the annotation made is stamped by a merge patch that leaves its spec, its data and the apply's
// field ownership alone; the children of an earlier order of the same identity are deleted, never
// listed as the order's.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installCrds } from "../../harness/world/managed-bus.ts";
import { permissionKind, secretKind, userKind } from "../../src/api/index.ts";
import type { ChildAction } from "../../src/orders/core/generations.ts";
import { ChildError } from "../../src/orders/core/errors.ts";
import { listChildren, performAction } from "../../src/orders/rabbitmq/children.ts";
import type { OrderIdentity } from "../../src/orders/core/naming.ts";
import { passwordSecretName, userChildName } from "../../src/orders/rabbitmq/naming.ts";
import { topologyFinalizer } from "../../src/rabbitmq/finalizer.ts";
import { RestKube } from "../../src/runtime/port/rest-kube.ts";
import { KubeRest, type KubeObject } from "../../src/runtime/port/kube-rest.ts";
import { eventually, freshNamespace, testCluster } from "../../harness/world/kube.ts";

const cluster = testCluster("management");
const kube = new RestKube(new KubeRest(cluster.kubeconfig));
const UID = "c5c3.io/rabbitmqvhost-uid";
let ns = "";

beforeAll(async () => {
  await installCrds(cluster.config);
  ns = await freshNamespace(cluster, "children");
});

afterAll(async () => {
  if (ns) await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

/** Generation 1's password Secret, User and Permission, written as a pass writes them. */
async function provision(order: OrderIdentity): Promise<void> {
  // No RabbitmqCluster of this name exists: no topology controller reaches a broker for these.
  const place = { namespace: ns, backend: "no-such-rabbitmq", resource: "", container: "" };
  for (const kind of ["passwordSecret", "account", "access"] as const) {
    await performAction(kube, order, place, { kind, op: "create", generation: 1 } satisfies ChildAction);
  }
}

const read = (kind: typeof userKind, name: string) => kube.get(kind, { namespace: ns, name }, { live: true });
const annotationManagers = (object: KubeObject | undefined) =>
  (object?.metadata?.managedFields ?? [])
    .filter((f) => JSON.stringify(f.fieldsV1 ?? {}).includes(`"f:${UID}"`))
    .map((f) => `${f.manager}/${f.operation}`)
    .sort();

describe("the uid of the order that made a child", () => {
  const identity = { cluster: "", namespace: "tenant-a", name: `o-${randomUUID().slice(0, 8)}` };

  it("is applied with every child, and an unstamped child is stamped without a rotation", async () => {
    // An operator version before the annotation: the same writes, without a uid to record.
    await provision({ ...identity, uid: undefined });
    const user = await read(userKind, userChildName(identity, 1));
    expect(user?.metadata?.annotations?.[UID]).toBeUndefined();
    const secretBefore = await read(secretKind, passwordSecretName(identity, 1));
    const password = (secretBefore?.["data"] as Record<string, string>)["password"];

    const order = { ...identity, uid: randomUUID() };
    const listing = await listChildren(kube, order, ns);
    expect([...listing.accounts.keys()]).toEqual([1]);
    expect([...listing.passwords.keys()]).toEqual([1]);
    for (const [kind, name] of [
      [userKind, userChildName(identity, 1)],
      [secretKind, passwordSecretName(identity, 1)],
    ] as const) {
      const child = await read(kind, name);
      expect(child?.metadata?.annotations?.[UID]).toBe(order.uid);
    }
    const secretAfter = await read(secretKind, passwordSecretName(identity, 1));
    expect((secretAfter?.["data"] as Record<string, string>)["password"]).toBe(password);
    const stampedUser = await read(userKind, userChildName(identity, 1));
    expect(stampedUser?.["spec"]).toEqual(user?.["spec"]);

    // The next apply of the User names the annotation: the apply owns it from then on, and the spec stays.
    await provision(order);
    const applied = await read(userKind, userChildName(identity, 1));
    expect(applied?.metadata?.annotations?.[UID]).toBe(order.uid);
    expect(annotationManagers(applied)).toContain("vhost-broker/Apply");
    expect(applied?.["spec"]).toEqual(user?.["spec"]);
  });

  it("of an earlier order of the same identity: its children are deleted and never listed", async () => {
    const earlier = { ...identity, name: `${identity.name}-e`, uid: randomUUID() };
    await provision(earlier);
    const user = await read(userKind, userChildName(earlier, 1));
    expect(user?.metadata?.annotations?.[UID]).toBe(earlier.uid);
    // Applied with the topology controller's finalizer: the controller needs no write of its own for it.
    expect(user?.metadata?.finalizers).toEqual([topologyFinalizer(userKind)]);

    const current = { ...earlier, uid: randomUUID() };
    const error = await listChildren(kube, current, ns).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChildError);
    expect((error as Error).message).toContain(
      `User ${ns}/${userChildName(earlier, 1)}, made by order uid ${earlier.uid}`,
    );
    // Deleted, not adopted. The children carry the topology finalizer the order applies them with; no
    // topology controller runs here, so the test lets go of it as one does for a CR without its cluster.
    const listing = await eventually("the earlier order's children to go", async () => {
      for (const kind of [userKind, permissionKind])
        for (const child of await kube.list(kind, ns, ""))
          if (child.metadata?.deletionTimestamp)
            await kube.removeFinalizer(kind, child, topologyFinalizer(kind)).catch(() => undefined);
      const l = await listChildren(kube, current, ns).catch(() => undefined);
      return l && l.accounts.size + l.access.size + l.passwords.size === 0 ? l : undefined;
    });
    expect(listing.accounts.size).toBe(0);
    for (const kind of [userKind, permissionKind, secretKind]) {
      const left = (await kube.list(kind, ns, "")).filter((o) =>
        o.metadata?.name?.startsWith(`${earlier.name}-`),
      );
      expect(left).toEqual([]);
    }
  });
});
