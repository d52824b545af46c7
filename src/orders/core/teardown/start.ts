// The start of a teardown: Deleting is said on its first pass, the ControlPlane is read (a teardown
// goes ahead without one), and under --secret-namespaces a teardown whose ControlPlane's namespace is
// not listed deletes nothing and holds the finalizer.
import { readControlPlane } from "../admission.ts";
import { teardownReachGate } from "../gates.ts";
import type { Backend } from "../kind.ts";
import { childSelector, teardownFinalizer } from "../naming.ts";
import { none } from "../requeue.ts";
import type { StepResult } from "../steps.ts";
import { logKey, target, type OrderTeardown } from "./context.ts";

const go: StepResult = { wake: none };

/** Deleting, said once per order and process (../teardown-events.ts). */
export async function announce<B extends Backend>(teardown: OrderTeardown<B>): Promise<StepResult> {
  await teardown.deps.teardownEvents?.deleting(target(teardown), teardown.kind.gvk.kind);
  return go;
}

export async function controlPlane<B extends Backend>(teardown: OrderTeardown<B>): Promise<StepResult> {
  const { identity, order } = teardown;
  teardown.controlPlane = await readControlPlane(teardown.deps.management, {
    ...identity,
    controlPlaneRef: order.spec.controlPlaneRef,
  });
  return go;
}

export async function reach<B extends Backend>(teardown: OrderTeardown<B>): Promise<StepResult> {
  const { kind, deps, identity, namespace } = teardown;
  const gate = teardownReachGate(deps.settings.secretNamespaces, identity, namespace, {
    finalizer: teardownFinalizer(kind.naming),
    selector: childSelector(kind.naming, identity),
  });
  if (gate.open) {
    teardown.deliveredSecret = gate.value.deliveredSecret;
    return go;
  }
  deps.log.warn({ ...logKey(teardown), namespace }, "teardown: Secrets out of reach, nothing deleted");
  teardown.holding = gate.gate;
  return { wake: none, stop: true };
}
