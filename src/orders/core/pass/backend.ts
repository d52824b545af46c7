// The gates between consent and the children: the kind's backend (for a RabbitMQVhost the managed bus,
// its RabbitmqCluster and default-user Secret), then the secret store's health.
import { secretStoreGate } from "../gates.ts";
import type { Backend } from "../kind.ts";
import { none } from "../requeue.ts";
import type { StepResult } from "../steps.ts";
import { closeGate, need, type OrderPass } from "./context.ts";

export async function backend<B extends Backend>(pass: OrderPass<B>): Promise<StepResult> {
  const bus = await pass.kind.backend(pass.deps.management, need(pass.controlPlane));
  if (!bus.open) return closeGate(pass, bus.gate);
  pass.backend = bus.value;
  return { wake: none };
}

export async function secretStore<B extends Backend>(pass: OrderPass<B>): Promise<StepResult> {
  const store = secretStoreGate(await pass.deps.store.health());
  return store.open ? { wake: none } : closeGate(pass, store.gate);
}
