// Teardown of a deleted order, in the reference's order: the OpenBao path, the kind's per-generation
// children (every Permission, every User), the container child (once it carries the order's current
// policy), the password Secrets, then the delivered Secret if the order controls it. A step that fails
// does not stop the steps after it. While the finalizer is held, Ready says which step blocks and why,
// and the teardown is retried (with backoff after a failure). With the ControlPlane gone the finalizer is
// released in the pass that issued the deletes, without waiting for the children to go (the topology
// controller lets go of a CR whose RabbitmqCluster is gone), but only once every delete was issued: a
// failed listing or a failed delete (the port reads a 404 as done) keeps the finalizer and is retried
// with backoff as with the ControlPlane present, since releasing it would orphan what was not deleted.
// Under --secret-namespaces a teardown whose ControlPlane's namespace is not listed deletes nothing and
// holds the finalizer (Ready SecretsOutOfReach says what removing it by hand leaves); without the
// order's own namespace it leaves the delivered Secret to the garbage collector (its owner reference).
// Only a kind the management cluster does not serve holds no children. The OpenBao purge is the one
// step whose failure does not hold a teardown without a ControlPlane: the path is that ControlPlane's,
// and it holds the credentials of users whose deletes were issued.
import { secretKind, type KindRef } from "../../api/index.ts";
import type { GatePass } from "../../gatekeeper/gatekeeper.ts";
import type { Result } from "../../runtime/controller.ts";
import { TransientError } from "../../runtime/errors.ts";
import type { KubeObject } from "../../runtime/kube-rest.ts";
import { isNotServed } from "../../runtime/kube.ts";
import { readControlPlane } from "./admission.ts";
import { DELETING, notOk, READY, REQUEUE } from "./conditions.ts";
import type { OrderDeps } from "./deps.ts";
import { apiErrorText } from "./errors.ts";
import { controlPlaneKey, teardownReachGate } from "./gates.ts";
import type { Backend, OrderKind, OrderObject } from "./kind.ts";
import {
  backupPath,
  childAnnotations,
  childLabels,
  childSelector,
  deliveredSecretName,
  isControllerRefTo,
  isOwnChild,
  teardownFinalizer,
  type OrderIdentity,
} from "./naming.ts";
import { resolveSpec } from "./spec.ts";
import { previousConditions } from "./status.ts";
import { mergeConditions } from "../../runtime/conditions.ts";

/** A kind the management cluster does not serve (no topology operator installed) holds no children. */
async function unlessNotServed<T>(read: Promise<T>, empty: T): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (isNotServed(error)) return empty;
    throw error;
  }
}

export async function teardown<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  raw: KubeObject,
  order: OrderObject,
  identity: OrderIdentity,
  gate: GatePass,
): Promise<Result> {
  const { management, home } = deps;
  const { naming } = kind;
  const log = { order: { cluster: identity.cluster, namespace: identity.namespace, name: identity.name } };
  const cp = await readControlPlane(management, { ...identity, controlPlaneRef: order.spec.controlPlaneRef });
  // The children live in the ControlPlane's namespace, which is the ref's whether or not it still exists.
  const ns = controlPlaneKey({ ...identity, controlPlaneRef: order.spec.controlPlaneRef }).namespace;
  const selector = childSelector(naming, identity);
  const reach = teardownReachGate(deps.settings.secretNamespaces, identity, ns, {
    finalizer: teardownFinalizer(naming),
    selector,
  });
  if (!reach.open) {
    deps.log.warn({ ...log, namespace: ns }, "teardown: Secrets out of reach, nothing deleted");
    await holding(kind, deps, gate, raw, order, reach.gate, false);
    return {};
  }
  const failures: string[] = [];
  /** Runs one step; false (and its failure recorded) when it threw. */
  const step = async (what: string, run: () => Promise<void>): Promise<boolean> => {
    try {
      await run();
      return true;
    } catch (error) {
      failures.push(`${what} failed: ${apiErrorText(error)}`);
      return false;
    }
  };

  const purgeFailed = !(await step("purging the backup", () =>
    deps.store.purge(backupPath(naming, identity, ns)),
  ));
  // By name and labels alone, not the recorded uid: the teardown also removes what an earlier order of
  // this identity left behind (its credentials are a dead order's), as the orphan sweep would.
  const own = (items: KubeObject[]) =>
    items.filter((i) =>
      isOwnChild(naming, identity, { name: i.metadata?.name ?? "", labels: i.metadata?.labels }),
    );
  const listed = async () => {
    const perKind = await Promise.all(
      kind.teardownKinds.map(
        async (k) => [k, own(await unlessNotServed(management.list(k, ns, selector), []))] as const,
      ),
    );
    const secrets = own(await management.list(secretKind, ns, selector));
    const container = await unlessNotServed(
      management.get(kind.container.kind, { namespace: ns, name: kind.container.name(identity) }),
      undefined,
    );
    return { perKind, secrets, container: container && own([container]).length === 1 ? [container] : [] };
  };

  let children: Awaited<ReturnType<typeof listed>> = { perKind: [], secrets: [], container: [] };
  await step("listing the children", async () => {
    children = await listed();
  });
  for (const [k, items] of children.perKind) {
    await step(`deleting the ${k.kind}s`, async () => {
      for (const item of items) await management.delete(k, refOf(item));
    });
  }
  for (const container of children.container) {
    const name = container.metadata?.name ?? "";
    // A container the current policy cannot be written onto is left alone (deleting it could apply a
    // policy the order no longer names); the other deletes go ahead.
    let current: KubeObject;
    try {
      const policy = kind.container.policy(resolveSpec(order).vhostDeletionPolicy);
      const spec = (container["spec"] ?? {}) as Record<string, unknown>;
      current = container;
      if (Object.entries(policy).some(([field, value]) => spec[field] !== value)) {
        // The whole spec, the labels and the uid annotation are applied again: fields the manager stops
        // naming would be removed (a container left behind would then read as made before children
        // recorded their order).
        current = await management.apply(kind.container.kind as KindRef, {
          metadata: {
            name,
            namespace: ns,
            labels: childLabels(naming, identity),
            annotations: childAnnotations(naming, identity),
          },
          spec: { ...kind.container.spec(container), ...policy },
        });
      }
    } catch (error) {
      deps.log.warn(
        { ...log, container: `${ns}/${name}` },
        `teardown: the ${kind.container.kind.kind} CR was not deleted: ${apiErrorText(error)}`,
      );
      continue;
    }
    // A container whose operator has not taken up the policy yet stays until a later pass (with the
    // ControlPlane gone there is none: it goes now).
    const settled = !cp || (kind.container.settled?.(current) ?? true);
    if (container.metadata?.deletionTimestamp || !settled) continue;
    await step(`deleting the ${kind.container.kind.kind} CR`, () =>
      management.delete(kind.container.kind, { namespace: ns, name }),
    );
  }
  await step("deleting the password Secrets", async () => {
    for (const secret of children.secrets) await management.delete(secretKind, refOf(secret));
  });
  if (reach.value.deliveredSecret) {
    await step("deleting the delivered Secret", async () => {
      const name = deliveredSecretName(identity);
      const delivered = await home.get(secretKind, { namespace: identity.namespace, name });
      if ((delivered?.metadata?.ownerReferences ?? []).some((r) => isControllerRefTo(naming, identity, r))) {
        await home.delete(secretKind, { namespace: identity.namespace, name });
      }
    });
  }

  // Without a ControlPlane the backup's path is that ControlPlane's, and its purge does not hold the
  // finalizer; every other step does, whether or not the ControlPlane exists.
  const tolerated = !cp && purgeFailed ? 1 : 0;
  if (failures.length > tolerated) {
    const message = `teardown: ${failures.join("; ")}; retried with backoff`;
    await holding(kind, deps, gate, raw, order, deleting(message), true);
    throw new TransientError(message);
  }
  if (cp) {
    let left: number;
    try {
      const now = await listed();
      left =
        now.perKind.reduce((n, [, items]) => n + items.length, 0) + now.container.length + now.secrets.length;
    } catch (error) {
      const message = `teardown: listing the children failed: ${apiErrorText(error)}; retried with backoff`;
      await holding(kind, deps, gate, raw, order, deleting(message), true);
      throw new TransientError(message, { cause: error });
    }
    if (left > 0) {
      deps.log.info({ ...log, left }, "teardown: waiting for the children to go");
      await holding(
        kind,
        deps,
        gate,
        raw,
        order,
        deleting(`teardown: waiting for ${left} children to be removed`),
        false,
      );
      return { requeueAfterMs: REQUEUE.short };
    }
  } else if (failures.length > 0) {
    deps.log.warn(
      { ...log, failures },
      "teardown: the ControlPlane is gone and every delete was issued; releasing the finalizer without the backup's purge",
    );
  }
  try {
    await home.removeFinalizer(kind.kind, raw, teardownFinalizer(naming));
  } catch (error) {
    if (error instanceof TransientError) throw error;
    throw new TransientError(
      `removing the finalizer ${teardownFinalizer(naming)} failed: ${apiErrorText(error)}`,
      {
        cause: error,
      },
    );
  }
  const delivered = reach.value.deliveredSecret
    ? {}
    : {
        deliveredSecret: "out of reach (secret-namespaces): the garbage collector removes it with the order",
      };
  deps.log.info({ ...log, ...delivered }, "teardown: done, finalizer released");
  return {};
}

const deleting = (message: string) => ({ reason: DELETING, message });

/** Ready says why the finalizer is still held; the other conditions keep what they said. */
async function holding<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  gate: GatePass,
  raw: KubeObject,
  order: OrderObject,
  why: { reason: string; message: string },
  failed: boolean,
): Promise<void> {
  const previous = previousConditions(order.status);
  const others = previous.filter((c) => c.type !== READY);
  const ready = { type: READY, ...notOk(why.reason, why.message) };
  const conditions = [
    ...others,
    ...mergeConditions(previous, [ready], order.metadata.generation ?? 0, deps.clock.now()),
  ];
  const status = await gate.exit({ ...order.status, conditions }, failed ? why.message : undefined);
  try {
    await deps.home.patchStatus(kind.kind, raw, status);
  } catch (error) {
    deps.log.warn(
      { order: order.metadata.name },
      `teardown: writing the status failed: ${apiErrorText(error)}`,
    );
  }
}

const refOf = (o: KubeObject) => ({ namespace: o.metadata?.namespace ?? "", name: o.metadata?.name ?? "" });
