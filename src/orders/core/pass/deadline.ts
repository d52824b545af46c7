// The rotation and sweep deadlines: the pass is looked at again when the next one falls due.
import { untilDeadline } from "../generations.ts";
import type { Backend } from "../kind.ts";
import { after, none } from "../requeue.ts";
import type { StepResult } from "../steps.ts";
import { need, type OrderPass } from "./context.ts";

export async function deadline<B extends Backend>(pass: OrderPass<B>): Promise<StepResult> {
  const due = untilDeadline(need(pass.rotation), new Date(pass.deps.clock.now()));
  if (due === undefined) return { wake: none };
  if (due > 0) return { wake: after(due, "deadline") };
  // A deadline already past is being acted on (a rotation or a sweep under way). The step that acts
  // says when to look again (a refused successor backs off); otherwise the floor keeps the order from
  // running again at once, and the children's events wake it sooner.
  return { wake: pass.underWay ? none : after(0, "pastDeadline") };
}
