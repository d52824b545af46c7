// Provisioning: the container child (the Vhost CR), then the password generations (plan → actions →
// the successor check → switch decision). Returns the resource condition, the rotation state for the
// status and when to look again; a Kubernetes-level failure reads the kind's error reason and is
// retried with backoff once the status is written.
import { isNotServed } from "../../runtime/port/kube.ts";
import { coreMessages, notOk, REQUEUE } from "./conditions.ts";
import { containerNameOn, listContainers, releaseContainers, type PlacedContainer } from "./containers.ts";
import { apiErrorText, ChildError } from "./errors.ts";
import { deliveredClaim, vouched } from "./evidence.ts";
import { planned } from "./generation-plan.ts";
import {
  childStateOf,
  decideSwitch,
  sweepUnderWay,
  type GenerationInput,
  type GenerationPlan,
  type ResourceView,
  type RotationStatus,
  type SwitchDecision,
} from "./generations.ts";
import type { Backend, ChildPlace, GenerationListing, OrderKind, SuccessorLogin } from "./kind.ts";
import type { OrderIdentity } from "./naming.ts";
import { need, type OrderPass } from "./pass/context.ts";
import { after, backoff, none, WAITING_FALLBACK_MS, type Wake } from "./requeue.ts";
import { resolveSpec, rotationStatusOf, type ResolvedSpec } from "./spec.ts";
import { sweptStrays } from "./strays.ts";
import type { ConditionState } from "./types.ts";

type Stopped = { kind: "stopped"; resource: ConditionState; wake: Wake };

export type ProvisionOutcome =
  /** Stopped before the generations: the rotation state is unchanged. */
  | Stopped
  | {
      kind: "planned";
      resource: ConditionState;
      rotation: RotationStatus;
      listing: GenerationListing;
      wake: Wake;
      /** A successor the backend accepted: delivered this pass, it becomes the live generation. */
      switchTo?: { generation: number; rotation: RotationStatus; resource: ConditionState } | undefined;
      /** The backends the order's containers name, as listed (a migration's old one among them). */
      containers: readonly (string | undefined)[];
    };

/** Provisions the pass's order on the backend its gate opened, in the ControlPlane's namespace. */
export async function provision<B extends Backend>(pass: OrderPass<B>): Promise<ProvisionOutcome> {
  const { kind, deps, identity: order } = pass;
  const resource = kind.resource(pass.order, order);
  const spec = resolveSpec(pass.order);
  const status = rotationStatusOf(pass.order.status);
  const where = { namespace: need(pass.controlPlane).namespace, backend: need(pass.backend).name, resource };
  const placed = await placeContainer(pass, where, spec);
  if (placed.kind === "stopped") return placed;
  const { place, containers } = placed;

  let listing: GenerationListing;
  try {
    listing = await kind.listGenerations(deps.management, order, place.namespace);
  } catch (error) {
    return {
      kind: "stopped",
      ...failure(kind, `listing the children of ${describe(kind, resource)}`, error),
    };
  }
  // Read after the listing: a kind names its accounts by what the listing found (a legacy scheme).
  const delivered = vouched(await deliveredClaim(deps.home, kind, order), listing.passwordOf);
  if (delivered.kind === "unvouched")
    deps.log.warn(
      { order: orderKeyOf(order) },
      "the delivered Secret carries credentials no generation holds; the status stands and the Secret is delivered again",
    );
  const base: GenerationInput = {
    spec: spec.rotation,
    status,
    children: listing.generations,
    resource,
    userName: (n) => kind.userName(order, n),
    words: kind.words,
    delivered,
    backend: place.backend,
    queuedAt: deps.queuedAt === undefined ? undefined : new Date(deps.queuedAt),
  };
  const now = new Date(deps.clock.now());
  const { input, plan, deferredMs } = await planned(pass, base, now);
  for (const action of plan.actions) {
    try {
      await kind.performAction(deps.management, order, place, action);
    } catch (error) {
      const what = `${action.op === "create" ? "creating" : "deleting"} the ${kind.words.pieces[action.kind]} of generation ${action.generation}`;
      // The rotation state stays as read: the plan's writes did not all happen.
      return { kind: "planned", rotation: status, listing, containers: [], ...failure(kind, what, error) };
    }
  }
  await sweptStrays(pass, plan, listing, delivered);
  await releaseContainers(kind, deps, order, { place, containers, listing, policy: spec.deletionPolicy });

  const { decision, refused } = await switchDecision(pass, { input, plan, listing, resource, now });
  const wake = wakeOf(pass, { plan, decision, refused, deferredMs, now, containers, place });
  const condition = (view: ResourceView): ConditionState => ({
    status: view.status,
    reason: kind.reasons.view[view.reason],
    message: view.message,
  });
  const switchTo = decision.switchTo && {
    generation: decision.switchTo.generation,
    rotation: decision.switchTo.status,
    resource: condition(decision.switchTo.view),
  };
  return {
    kind: "planned",
    resource: condition(decision.view),
    rotation: decision.status,
    listing,
    wake,
    switchTo,
    containers: containers.map((c) => c.backend),
  };
}

/** The container child on the current backend, applied with the order's policy, and Ready. */
async function placeContainer<B extends Backend>(
  pass: OrderPass<B>,
  where: Omit<ChildPlace, "container">,
  spec: ResolvedSpec,
): Promise<Stopped | { kind: "placed"; place: ChildPlace; containers: PlacedContainer[] }> {
  const { kind, deps, identity: order } = pass;
  const { resource } = where;
  let containers: PlacedContainer[];
  try {
    containers = await listContainers(kind, deps.management, order, where.namespace);
  } catch (error) {
    const what = `listing the ${kind.container.gvk.kind} CRs of ${describe(kind, resource)}`;
    return { kind: "stopped", ...failure(kind, what, error) };
  }
  const place: ChildPlace = {
    ...where,
    container: containerNameOn(kind.container.name(order), where.backend, containers),
  };
  let applied;
  try {
    applied = await kind.applyContainer(deps.management, order, place, spec.deletionPolicy);
  } catch (error) {
    if (isNotServed(error)) applied = { kind: "notServed" as const };
    else {
      const what = `applying the ${kind.container.gvk.kind} CR of ${describe(kind, resource)}`;
      return { kind: "stopped", ...failure(kind, what, error) };
    }
  }
  if (applied.kind === "notServed") {
    const condition = notOk(kind.reasons.backendNotInstalled, kind.messages.backendNotInstalled());
    return { kind: "stopped", resource: condition, wake: after(0, "notServed") };
  }
  const state = childStateOf(applied.object, kind.childReadiness);
  if (state.phase === "refused") {
    const condition = notOk(
      kind.reasons.containerFailed,
      kind.messages.containerFailed(resource, state.message),
    );
    return { kind: "stopped", resource: condition, wake: after(0, "refused") };
  }
  if (state.phase !== "ready") {
    const condition = notOk(kind.reasons.waitingForContainer, kind.messages.waitingForContainer(resource));
    return { kind: "stopped", resource: condition, wake: after(WAITING_FALLBACK_MS, "waiting") };
  }
  return { kind: "placed", place, containers };
}

/** The switch to a successor the plan offers, after the backend's check of its login. */
async function switchDecision<B extends Backend>(
  pass: OrderPass<B>,
  at: {
    input: GenerationInput;
    plan: GenerationPlan;
    listing: GenerationListing;
    resource: string;
    now: Date;
  },
): Promise<{ decision: SwitchDecision; refused: boolean }> {
  const { kind, deps, identity: order } = pass;
  const { plan } = at;
  const successor = plan.switchable;
  let decision: SwitchDecision = { status: plan.status, view: plan.view };
  let refused = false;
  if (successor !== undefined) {
    const backend = need(pass.backends).current;
    const check =
      deps.successorCheck ??
      ((login: SuccessorLogin, timeoutMs: number) =>
        kind.successorCheck(deps.management, backend, login, timeoutMs));
    const verdict = await check(
      {
        host: backend.endpoint.host,
        port: backend.endpoint.port,
        resource: at.resource,
        username: kind.userName(order, successor),
        password: at.listing.passwordOf(successor),
      },
      deps.settings.brokerCheckTimeoutMs,
    );
    decision = decideSwitch(at.input, plan, verdict, at.now);
    if (!verdict.accepted) {
      refused = true;
      deps.log.warn({ order: orderKeyOf(order), generation: successor }, verdict.reason);
    }
  }
  refused ||= decision.view.reason === "Failed";
  return { decision, refused };
}

/** When to look at the order again after provisioning; a refused successor backs off, doubling. */
function wakeOf<B extends Backend>(
  pass: OrderPass<B>,
  at: {
    plan: GenerationPlan;
    decision: SwitchDecision;
    refused: boolean;
    deferredMs: number;
    now: Date;
    containers: PlacedContainer[];
    place: ChildPlace;
  },
): Wake {
  const { deps, identity: order } = pass;
  const { plan, decision, refused, now } = at;
  const backoffKey = `${order.cluster}/${order.namespace}/${order.name}`;
  // A generation in flight, or a sweep, waits for its children's events; the fallback makes sure it
  // is looked at.
  const inFlight =
    plan.target.kind === "first" ||
    plan.target.kind === "continue" ||
    plan.target.kind === "rotate" ||
    sweepUnderWay(plan.status, now);
  let wake: Wake = none;
  if (at.deferredMs > 0) wake = after(at.deferredMs, "deadline");
  else if (refused) wake = after(deps.backoff.refused(backoffKey, deps.settings.transientCapMs), "refused");
  // A held sweep asks again soon: nothing is watched that says when the last consumer goes.
  else if (plan.held)
    wake = after(Math.min(REQUEUE.short, Math.max(0, plan.held.until.getTime() - now.getTime())), "waiting");
  // The sweep completed: a rotation it held (a lost piece of the live user, which has no deadline of
  // its own) starts on the next pass, not at the fallback.
  else if (plan.swept !== undefined && plan.target.kind === "held") wake = after(0, "waiting");
  // A password a validation policy refused: a new generation with a new password is minted when due.
  else if (plan.newPasswordAt)
    wake = after(Math.max(0, plan.newPasswordAt.getTime() - now.getTime()), "waiting");
  else if (!decision.switchTo && (inFlight || decision.view.status === "False"))
    wake = after(WAITING_FALLBACK_MS, "waiting");
  // A container on a backend the order left waits for that backend's last children, then for its own
  // removal: the order's own deletes bring no pass (their echoes are dropped), so it looks again.
  else if (at.containers.some((c) => c.name !== at.place.container)) wake = after(REQUEUE.short, "waiting");
  if (!refused) deps.backoff.forget(backoffKey);
  return wake;
}

/** A child-level failure: the kind's error reason, retried with backoff. */
function failure(
  kind: OrderKind<Backend>,
  what: string,
  error: unknown,
): { resource: ConditionState; wake: Wake } {
  const message =
    error instanceof ChildError ? error.message : coreMessages.childError(what, apiErrorText(error));
  return { resource: notOk(kind.reasons.error, message), wake: backoff(message) };
}

const describe = (kind: OrderKind<Backend>, resource: string): string =>
  `${kind.container.gvk.kind.toLowerCase()} "${resource}"`;

const orderKeyOf = (o: OrderIdentity) => ({ cluster: o.cluster, namespace: o.namespace, name: o.name });
