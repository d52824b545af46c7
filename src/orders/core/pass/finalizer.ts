// The teardown finalizer, added before anything is provisioned. The pass that adds it writes no
// conditions: the update brings the next pass.
import { TransientError } from "../../../runtime/base/errors.ts";
import { apiErrorText } from "../errors.ts";
import type { Backend } from "../kind.ts";
import { teardownFinalizer } from "../naming.ts";
import { none } from "../requeue.ts";
import type { StepResult } from "../steps.ts";
import type { OrderPass } from "./context.ts";

export async function finalizer<B extends Backend>(pass: OrderPass<B>): Promise<StepResult> {
  const { kind, deps } = pass;
  let added: boolean;
  try {
    added = await deps.home.ensureFinalizer(kind.gvk, pass.raw, teardownFinalizer(kind.naming));
  } catch (error) {
    if (error instanceof TransientError) throw error;
    throw new TransientError(
      `adding the finalizer ${teardownFinalizer(kind.naming)} failed: ${apiErrorText(error)}`,
      { cause: error },
    );
  }
  return { wake: none, stop: added };
}
