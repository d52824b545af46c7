// The generation plan of a pass: who still uses the superseded user (asked on the backend its children
// name), the plan of the generation machine over that evidence, and the namespace's bound on the
// rotations it starts, which holds back a rotation's successor until the bound lets it go.
import type { OrderDeps } from "./deps.ts";
import {
  deferredRotationView,
  planGenerations,
  supersededToAsk,
  type GenerationInput,
  type GenerationPlan,
} from "./generations.ts";
import { childrenOf } from "./generations/children.ts";
import type { Backend } from "./kind.ts";
import type { OrderIdentity } from "./naming.ts";
import { need, type OrderPass } from "./pass/context.ts";
import { useOf } from "./use-evidence.ts";

export interface PlannedGenerations {
  input: GenerationInput;
  plan: GenerationPlan;
  /** How long the rotation the plan would start waits for the namespace's bound; 0 when it starts now. */
  deferredMs: number;
}

export async function planned<B extends Backend>(
  pass: OrderPass<B>,
  base: GenerationInput,
  now: Date,
): Promise<PlannedGenerations> {
  const { kind, deps, identity: order } = pass;
  const { status } = base;
  const asked = supersededToAsk(base, now);
  // Who still uses the superseded user, asked on the backend its children name (a migration's old one).
  const evidence =
    asked === undefined
      ? undefined
      : await useOf(
          kind,
          deps,
          order,
          status,
          await need(pass.backends).named(childrenOf(base.children, asked).backend),
          asked,
        );
  // A login seen since the switch is kept in the status: the next pass may find the record forgotten.
  const seen = evidence?.loginsSinceSwitch;
  const input: GenerationInput = {
    ...base,
    status:
      typeof seen === "number" && seen > (status.previousPasswordLoginsSince ?? 0)
        ? { ...status, previousPasswordLoginsSince: seen }
        : status,
    sweepHold: { holdMs: deps.settings.sweepHoldMs, ...evidence },
  };
  const plannedNow = planGenerations(input, now);
  const deferredMs = rotationDeferral(deps, order, plannedNow);
  const plan = deferredMs > 0 ? deferred(input, plannedNow, deps, order) : plannedNow;
  const held = plan.held?.consumers;
  // A backend that cannot tell reads NaN: held, with no count.
  deps.sweepHolds?.held(order, held === undefined ? undefined : held.known ? held.count : Number.NaN);
  return { input, plan, deferredMs };
}

/** How long the rotation the plan starts waits for the namespace's bound; 0 when it starts now. */
function rotationDeferral(deps: OrderDeps, order: OrderIdentity, plan: GenerationPlan): number {
  if (plan.target.kind !== "rotate" || !deps.rotations) return 0;
  return deps.rotations.take(
    `${order.cluster}/${order.namespace}`,
    `${order.name}/${plan.target.generation}`,
  );
}

/** The plan without the creation of the rotation's successor, which waits for the namespace's bound. */
function deferred(
  input: GenerationInput,
  plan: GenerationPlan,
  deps: OrderDeps,
  order: OrderIdentity,
): GenerationPlan {
  const generation = plan.target.kind === "rotate" ? plan.target.generation : 0;
  const rate = deps.rotations?.rate;
  const bound = `namespace ${order.namespace} started ${rate?.limit} rotations of this kind in the last ${(rate?.windowMs ?? 0) / 1000}s, its bound (--namespace-rotation-limit)`;
  return {
    ...plan,
    actions: plan.actions.filter((a) => !(a.op === "create" && a.generation === generation)),
    view: deferredRotationView(input, generation, bound),
  };
}
