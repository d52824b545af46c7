// The deletes of a teardown, in the reference's order: the OpenBao path, the kind's per-generation
// children (every access child, then every account child), the container child (once it carries the
// order's current policy), the password Secrets, then the delivered Secret if the order controls it.
// A delete that fails does not stop those after it: it is recorded, and the hold step keeps the
// finalizer.
import { secretKind } from "../../../api/index.ts";
import { PolicyNotWritten, releaseContainer } from "../containers.ts";
import type { Backend } from "../kind.ts";
import { backupPath, deliveredSecretName, isControllerRefTo } from "../naming.ts";
import { none } from "../requeue.ts";
import { resolveSpec } from "../spec.ts";
import type { StepResult } from "../steps.ts";
import { attempt, listChildren, logKey, refOf, type OrderTeardown } from "./context.ts";

const go: StepResult = { wake: none };

export async function purge<B extends Backend>(teardown: OrderTeardown<B>): Promise<StepResult> {
  const { kind, deps, identity, namespace } = teardown;
  const purged = await attempt(teardown, "purging the backup", () =>
    deps.store.purge(backupPath(kind.naming, identity, namespace)),
  );
  teardown.purgeFailed = !purged;
  return go;
}

export async function children<B extends Backend>(teardown: OrderTeardown<B>): Promise<StepResult> {
  await attempt(teardown, "listing the children", async () => {
    teardown.children = await listChildren(teardown);
  });
  return go;
}

/** The per-generation children, kind by kind: every access child, then every account child. */
export async function generations<B extends Backend>(teardown: OrderTeardown<B>): Promise<StepResult> {
  const { management } = teardown.deps;
  for (const [k, items] of teardown.children.perKind) {
    await attempt(teardown, `deleting the ${k.kind}s`, async () => {
      for (const item of items) await management.delete(k, refOf(item));
    });
  }
  return go;
}

export async function container<B extends Backend>(teardown: OrderTeardown<B>): Promise<StepResult> {
  const { kind, deps, identity } = teardown;
  const policy = resolveSpec(teardown.order).deletionPolicy;
  for (const child of teardown.children.container) {
    const name = `${teardown.namespace}/${child.metadata?.name ?? ""}`;
    // A container whose operator has not taken up the policy yet stays until a later pass (with the
    // ControlPlane gone there is none: it goes now).
    await attempt(teardown, `deleting the ${kind.container.gvk.kind} CR ${name}`, async () => {
      try {
        const present = teardown.controlPlane !== undefined;
        await releaseContainer(kind, deps.management, identity, child, policy, present);
      } catch (error) {
        if (!(error instanceof PolicyNotWritten)) throw error;
        // The other deletes go ahead; the container stays, and the wait for the children holds the order.
        deps.log.warn(
          { ...logKey(teardown), container: name },
          `teardown: the ${kind.container.gvk.kind} CR was not deleted: ${error.message}`,
        );
      }
    });
  }
  return go;
}

export async function passwords<B extends Backend>(teardown: OrderTeardown<B>): Promise<StepResult> {
  const { management } = teardown.deps;
  await attempt(teardown, "deleting the password Secrets", async () => {
    for (const secret of teardown.children.secrets) await management.delete(secretKind, refOf(secret));
  });
  return go;
}

/** The delivered Secret, if the order controls it and it is in reach; else the garbage collector's. */
export async function delivered<B extends Backend>(teardown: OrderTeardown<B>): Promise<StepResult> {
  const { kind, deps, identity } = teardown;
  if (!teardown.deliveredSecret) return go;
  await attempt(teardown, "deleting the delivered Secret", async () => {
    const name = deliveredSecretName(identity);
    const secret = await deps.home.get(secretKind, { namespace: identity.namespace, name });
    const owners = secret?.metadata?.ownerReferences ?? [];
    if (owners.some((r) => isControllerRefTo(kind.naming, identity, r))) {
      await deps.home.delete(secretKind, { namespace: identity.namespace, name });
    }
  });
  return go;
}
