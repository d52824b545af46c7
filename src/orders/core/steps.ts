// How a pass runs, whether it reconciles an order or tears it down: a list of steps in order, each of
// which records what it found on the pass's context and says when it wants to be looked at again; a
// step that stops ends the list. The wakes are merged by the one requeue rule (requeue.ts).
import { decideRequeue, type Decision, type Wake } from "./requeue.ts";

export interface StepResult {
  wake: Wake;
  stop?: boolean;
}

export type PassStep<C> = (context: C) => Promise<StepResult>;

/** Runs `steps` until one stops; `wakes` are the pass's own (an order's refresh on a target cluster). */
export async function runSteps<C>(
  steps: readonly PassStep<C>[],
  context: C,
  wakes: Wake[] = [],
): Promise<Decision> {
  for (const step of steps) {
    const { wake, stop } = await step(context);
    wakes.push(wake);
    if (stop) break;
  }
  return decideRequeue(wakes);
}
