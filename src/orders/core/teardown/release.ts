// The last step of a teardown: the finalizer is released, and this step, the one that released it,
// says Deleted (../teardown-events.ts).
import { TransientError } from "../../../runtime/base/errors.ts";
import { apiErrorText } from "../errors.ts";
import type { Backend } from "../kind.ts";
import { teardownFinalizer } from "../naming.ts";
import { none } from "../requeue.ts";
import type { StepResult } from "../steps.ts";
import { logKey, target, type OrderTeardown } from "./context.ts";

export async function release<B extends Backend>(teardown: OrderTeardown<B>): Promise<StepResult> {
  const { kind, deps } = teardown;
  try {
    await deps.home.removeFinalizer(kind.gvk, teardown.raw, teardownFinalizer(kind.naming));
  } catch (error) {
    if (error instanceof TransientError) throw error;
    throw new TransientError(
      `removing the finalizer ${teardownFinalizer(kind.naming)} failed: ${apiErrorText(error)}`,
      { cause: error },
    );
  }
  const leftToCollector = teardown.deliveredSecret
    ? {}
    : {
        deliveredSecret: "out of reach (secret-namespaces): the garbage collector removes it with the order",
      };
  deps.log.info({ ...logKey(teardown), ...leftToCollector }, "teardown: done, finalizer released");
  await deps.teardownEvents?.deleted(target(teardown), kind.gvk.kind);
  return { wake: none };
}
