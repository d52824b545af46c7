// What holds the finalizer after the deletes: a delete that failed (retried with backoff), children
// still there (waited for, while the ControlPlane exists), and accounts of the generations the status
// names that a removal by name could not take away. With the ControlPlane gone the finalizer is released
// in the pass that issued the deletes, without waiting for the children to go (the topology controller
// lets go of a CR whose RabbitmqCluster is gone), but only once every delete was issued.
import { REQUEUE } from "../conditions.ts";
import { apiErrorText } from "../errors.ts";
import type { Backend } from "../kind.ts";
import { after, backoff, none } from "../requeue.ts";
import type { StepResult } from "../steps.ts";
import { deleting, listChildren, logKey, type OrderTeardown } from "./context.ts";

const go: StepResult = { wake: none };

/**
 * A failed delete holds the finalizer. Without a ControlPlane the backup's path is that ControlPlane's,
 * and its purge does not hold it; every other step does, whether or not the ControlPlane exists.
 */
export async function failed<B extends Backend>(teardown: OrderTeardown<B>): Promise<StepResult> {
  const tolerated = !teardown.controlPlane && teardown.purgeFailed ? 1 : 0;
  if (teardown.failures.length <= tolerated) return go;
  const message = `teardown: ${teardown.failures.join("; ")}; retried with backoff`;
  teardown.holding = deleting(message);
  return { wake: backoff(message), stop: true };
}

/** Every child gone, while the ControlPlane exists. */
export async function gone<B extends Backend>(teardown: OrderTeardown<B>): Promise<StepResult> {
  const { deps } = teardown;
  if (!teardown.controlPlane) {
    if (teardown.failures.length > 0)
      deps.log.warn(
        { ...logKey(teardown), failures: teardown.failures },
        "teardown: the ControlPlane is gone and every delete was issued; releasing the finalizer without the backup's purge",
      );
    return go;
  }
  let left: number;
  try {
    const now = await listChildren(teardown);
    left =
      now.perKind.reduce((n, [, items]) => n + items.length, 0) + now.container.length + now.secrets.length;
  } catch (error) {
    const message = `teardown: listing the children failed: ${apiErrorText(error)}; retried with backoff`;
    teardown.holding = deleting(message);
    return { wake: backoff(message, undefined, error), stop: true };
  }
  if (left === 0) return go;
  deps.log.info({ ...logKey(teardown), left }, "teardown: waiting for the children to go");
  teardown.holding = deleting(`teardown: waiting for ${left} children to be removed`);
  return { wake: after(REQUEUE.short, "waiting"), stop: true };
}

/**
 * Every child gone: the accounts of the generations the status names (the order made them: it
 * delivered them) are removed by name, as a completed sweep removes strays. A live User lost (its
 * finalizer stripped) leaves its broker user behind, still in its grace when the order goes; with the
 * vhost deleted first no permission names it any more. An account of the order's naming scheme that
 * the order never delivered (one it refused to take over) is left alone.
 */
export async function strays<B extends Backend>(teardown: OrderTeardown<B>): Promise<StepResult> {
  const { kind, deps } = teardown;
  const cp = teardown.controlPlane;
  const status = teardown.order.status;
  const known = [status?.passwordGeneration, status?.previousPasswordGeneration]
    .filter((n): n is number => n !== undefined && n > 0)
    .map((n) => kind.userName(teardown.identity, n));
  if (!cp || !kind.removeStrayAccounts || known.length === 0) return go;
  const bus = await kind.backend(deps.management, cp);
  // A backend that is gone took its accounts with it.
  if (!bus.open) return go;
  const resource = kind.resource(teardown.order, teardown.identity);
  const ours = (username: string) => known.includes(username);
  const result = deps.strayAccounts
    ? await deps.strayAccounts(resource, ours, known)
    : await kind.removeStrayAccounts(
        deps.management,
        bus.value,
        resource,
        ours,
        deps.settings.brokerCheckTimeoutMs,
        logKey(teardown).order,
        known,
      );
  if (result.removed.length > 0)
    deps.log.warn(
      { ...logKey(teardown), removed: result.removed },
      "teardown: removed accounts no child declared",
    );
  if (result.failure === undefined) return go;
  const message = `teardown: removing the accounts no child declared: ${result.failure}; retried with backoff`;
  teardown.holding = deleting(message);
  return { wake: backoff(message), stop: true };
}
