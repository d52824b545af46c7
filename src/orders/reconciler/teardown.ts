// Teardown of a deleted order, in the reference's order: the OpenBao path, every Permission, every User,
// the Vhost CR (once it carries the order's current policy), the password Secrets, then the delivered
// Secret if the order controls it. The finalizer is held while any child is still listed; with the
// ControlPlane gone the deletes are issued and the finalizer released in one pass.
import type { RabbitMQVhost } from "../../api/index.ts";
import { permissionKind, userKind, vhostKind } from "../../api/index.ts";
import { REQUEUE } from "../conditions.ts";
import { controlPlaneKey } from "../gates.ts";
import {
  backupPath,
  childLabels,
  deliveredSecretName,
  isControllerRefTo,
  isOwnChild,
  vhostChildName,
  type OrderIdentity,
} from "../naming.ts";
import { readControlPlane, setFinalizer } from "./admission.ts";
import { ReconcileError, type OrderDeps, type ReconcileResult } from "./deps.ts";
import {
  apiErrorText,
  applyCustom,
  deleteCustom,
  deleteSecret,
  listCustom,
  notServed,
  readCustom,
  readSecret,
  type Clients,
} from "./kube.ts";
import { resolveSpec } from "./spec.ts";
import { childSelector } from "../naming.ts";

/** A kind the management cluster does not serve (no topology operator installed) holds no children. */
function emptyWhenNotServed<T>(empty: T): (error: unknown) => T {
  return (error) => {
    if (notServed(error)) return empty;
    throw error;
  };
}

interface Named {
  metadata?: { name?: string; labels?: Record<string, string>; deletionTimestamp?: unknown };
  spec?: Record<string, unknown>;
}

export async function teardown(
  deps: OrderDeps,
  management: Clients,
  home: Clients,
  order: RabbitMQVhost,
  identity: OrderIdentity,
): Promise<ReconcileResult> {
  const log = { order: { cluster: identity.cluster, namespace: identity.namespace, name: identity.name } };
  const cp = await readControlPlane(management.custom, {
    ...identity,
    controlPlaneRef: order.spec.controlPlaneRef,
  });
  // The children live in the ControlPlane's namespace, which is the ref's whether or not it still exists.
  const ns = controlPlaneKey({ ...identity, controlPlaneRef: order.spec.controlPlaneRef }).namespace;
  const step = async (what: string, run: () => Promise<void>): Promise<void> => {
    try {
      await run();
    } catch (error) {
      throw new ReconcileError("transient", `teardown: ${what} failed: ${apiErrorText(error)}`);
    }
  };

  await step("purging the backup", () => deps.store.purge(backupPath(identity, ns)));
  const selector = childSelector(identity);
  const listed = async () => {
    const [permissions, users, secrets] = await Promise.all([
      listCustom(management.custom, permissionKind, ns, selector).catch(emptyWhenNotServed([])),
      listCustom(management.custom, userKind, ns, selector).catch(emptyWhenNotServed([])),
      management.core.listNamespacedSecret({ namespace: ns, labelSelector: selector }).then((l) => l.items),
    ]);
    const own = (items: unknown[]) =>
      (items as Named[])
        .map((i) => ({ name: i.metadata?.name ?? "", labels: i.metadata?.labels }))
        .filter((m) => isOwnChild(identity, m))
        .map((m) => m.name);
    const vhostObject = (await readCustom(management.custom, vhostKind, ns, vhostChildName(identity)).catch(
      emptyWhenNotServed(undefined),
    )) as Named | undefined;
    const vhost =
      vhostObject &&
      isOwnChild(identity, { name: vhostObject.metadata?.name ?? "", labels: vhostObject.metadata?.labels })
        ? [vhostObject]
        : [];
    return { permissions: own(permissions), users: own(users), vhost, secrets: own(secrets) };
  };

  let children: Awaited<ReturnType<typeof listed>> = { permissions: [], users: [], vhost: [], secrets: [] };
  await step("listing the children", async () => {
    children = await listed();
  });
  await step("deleting the Permissions", async () => {
    for (const name of children.permissions) await deleteCustom(management.custom, permissionKind, ns, name);
  });
  await step("deleting the Users", async () => {
    for (const name of children.users) await deleteCustom(management.custom, userKind, ns, name);
  });
  for (const vhost of children.vhost) {
    const name = vhost.metadata?.name ?? "";
    // A Vhost CR the current policy cannot be written onto is left alone; the other deletes go ahead.
    try {
      const policy = resolveSpec(order).vhostDeletionPolicy;
      if (vhost.spec?.["deletionPolicy"] !== policy) {
        // The whole spec is applied again: fields the manager stops naming would be removed.
        await applyCustom(management.custom, vhostKind, {
          metadata: { name, namespace: ns, labels: childLabels(identity) },
          spec: { ...pickVhostSpec(vhost.spec ?? {}), deletionPolicy: policy },
        });
      }
      if (!vhost.metadata?.deletionTimestamp) await deleteCustom(management.custom, vhostKind, ns, name);
    } catch (error) {
      deps.log.warn(
        { ...log, vhostCr: `${ns}/${name}` },
        `teardown: the Vhost CR was not deleted: ${apiErrorText(error)}`,
      );
    }
  }
  await step("deleting the password Secrets", async () => {
    for (const name of children.secrets) await deleteSecret(management.core, ns, name);
  });
  await step("deleting the delivered Secret", async () => {
    const name = deliveredSecretName(identity);
    const delivered = await readSecret(home.core, identity.namespace, name);
    if ((delivered?.metadata?.ownerReferences ?? []).some((r) => isControllerRefTo(identity, r))) {
      await deleteSecret(home.core, identity.namespace, name);
    }
  });

  if (cp) {
    let left = 0;
    await step("listing the children", async () => {
      const now = await listed();
      left = now.permissions.length + now.users.length + now.vhost.length + now.secrets.length;
    });
    if (left > 0) {
      deps.log.info({ ...log, left }, "teardown: waiting for the children to go");
      return { requeueAfterMs: REQUEUE.short };
    }
  }
  await setFinalizer(home.custom, order, false);
  deps.log.info(log, "teardown: done, finalizer released");
  return {};
}

/** The fields of the Vhost spec the order applies. */
function pickVhostSpec(spec: Record<string, unknown>): Record<string, unknown> {
  return { name: spec["name"], rabbitmqClusterReference: spec["rabbitmqClusterReference"] };
}
