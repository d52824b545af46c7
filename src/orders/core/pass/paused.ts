// A paused order keeps what it has (../pause.ts). Its teardown is not paused: it runs instead of the
// pass's steps.
import type { Backend } from "../kind.ts";
import { pausedCondition } from "../pause.ts";
import { none } from "../requeue.ts";
import type { StepResult } from "../steps.ts";
import { keptDelivery, type OrderPass } from "./context.ts";

export async function paused<B extends Backend>(pass: OrderPass<B>): Promise<StepResult> {
  const resource = pausedCondition(pass.order, pass.kind.resourceCondition);
  if (!resource) return { wake: none };
  pass.update = { resource, delivery: keptDelivery(pass.order) };
  return { wake: none, stop: true };
}
