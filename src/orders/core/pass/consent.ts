// The pass's first step: the order's consent (cluster name, ControlPlane, namespace assignment) and,
// under --secret-namespaces, whether the ControlPlane's namespace is in reach.
import { admit, readControlPlane } from "../admission.ts";
import { secretReachGate } from "../gates.ts";
import type { Backend } from "../kind.ts";
import { none } from "../requeue.ts";
import type { StepResult } from "../steps.ts";
import { closeGate, type OrderPass } from "./context.ts";

export async function consent<B extends Backend>(pass: OrderPass<B>): Promise<StepResult> {
  const { deps, identity, order } = pass;
  const cp = await readControlPlane(deps.management, {
    ...identity,
    controlPlaneRef: order.spec.controlPlaneRef,
  });
  const admitted = admit(identity, order.spec, cp);
  if (!admitted.open) return closeGate(pass, admitted.gate);
  const reach = secretReachGate(deps.settings.secretNamespaces, identity, admitted.value);
  if (!reach.open) return closeGate(pass, reach.gate);
  pass.controlPlane = admitted.value;
  return { wake: none };
}
