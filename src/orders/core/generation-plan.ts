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
import { rotationNamespace } from "./rotation-rate.ts";
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
  // A rotation held back by the namespace's bound is judged as of when it was first held.
  const heldSince = deps.rotations?.heldSince(rotationNamespace(order), order.name);
  const queuedAt =
    heldSince !== undefined && (base.queuedAt?.getTime() ?? Infinity) > heldSince
      ? new Date(heldSince)
      : base.queuedAt;
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
    queuedAt,
    status:
      typeof seen === "number" && seen > (status.previousPasswordLoginsSince ?? 0)
        ? { ...status, previousPasswordLoginsSince: seen }
        : status,
    sweepHold: { holdMs: deps.settings.sweepHoldMs, ...evidence },
  };
  const plannedNow = planGenerations(input, now);
  const deferredMs = rotationDeferral(deps, order, plannedNow, now);
  const plan = deferredMs > 0 ? deferred(input, plannedNow, deps, order) : plannedNow;
  const held = plan.held?.consumers;
  // A backend that cannot tell reads NaN: held, with no count.
  deps.sweepHolds?.held(order, held === undefined ? undefined : held.known ? held.count : Number.NaN);
  return { input, plan, deferredMs };
}

/**
 * How long the rotation the plan starts waits for the namespace's bound; 0 when it starts now. A
 * rotation held back is remembered from the first time until it starts or is no longer planned.
 */
function rotationDeferral(deps: OrderDeps, order: OrderIdentity, plan: GenerationPlan, now: Date): number {
  const { rotations } = deps;
  if (!rotations) return 0;
  const namespace = rotationNamespace(order);
  const wait =
    plan.target.kind === "rotate" ? rotations.take(namespace, `${order.name}/${plan.target.generation}`) : 0;
  if (wait > 0) rotations.hold(namespace, order.name, now.getTime());
  else rotations.release(namespace, order.name);
  return wait;
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
