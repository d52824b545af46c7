// Provisioning: the container child (the Vhost CR), then the password generations (plan → actions →
// the successor check → switch decision). Returns the resource condition, the rotation state for the
// status and when to look again; a Kubernetes-level failure reads the kind's error reason and is
// retried with backoff once the status is written.
import { isNotServed } from "../../runtime/port/kube.ts";
import { coreMessages, notOk, REQUEUE } from "./conditions.ts";
import type { ConditionState } from "./types.ts";
import type { OrderDeps } from "./deps.ts";
import { apiErrorText, ChildError } from "./errors.ts";
import type { PassBackends } from "./backends.ts";
import { containerNameOn, listContainers, releaseContainers, type PlacedContainer } from "./containers.ts";
import { childrenOf } from "./generations/children.ts";
import { generationOfUser, vouched, type DeliveredClaim } from "./evidence.ts";
import {
  childStateOf,
  decideSwitch,
  deferredRotationView,
  planGenerations,
  supersededToAsk,
  sweepUnderWay,
  type DeliveredEvidence,
  type GenerationInput,
  type GenerationPlan,
  type ResourceView,
  type RotationStatus,
  type SwitchDecision,
} from "./generations.ts";
import type { Backend, ChildPlace, GenerationListing, OrderKind, SuccessorLogin } from "./kind.ts";
import type { OrderIdentity } from "./naming.ts";
import { useOf } from "./use-evidence.ts";
import { after, backoff, none, WAITING_FALLBACK_MS, type Wake } from "./requeue.ts";
import type { ResolvedSpec } from "./spec.ts";

export type ProvisionOutcome =
  /** Stopped before the generations: the rotation state is unchanged. */
  | { kind: "stopped"; resource: ConditionState; wake: Wake }
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

export async function provision<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  order: OrderIdentity,
  where: Omit<ChildPlace, "container">,
  spec: ResolvedSpec,
  status: RotationStatus,
  /** Read after the listing: a kind names its accounts by what the listing found (a legacy scheme). */
  readClaim: () => Promise<DeliveredClaim>,
  backends: PassBackends<B>,
): Promise<ProvisionOutcome> {
  const { resource } = where;
  const backend = backends.current;
  const failure = (what: string, error: unknown): { resource: ConditionState; wake: Wake } => {
    const message =
      error instanceof ChildError ? error.message : coreMessages.childError(what, apiErrorText(error));
    return { resource: notOk(kind.reasons.error, message), wake: backoff(message) };
  };

  let containers: PlacedContainer[];
  try {
    containers = await listContainers(kind, deps.management, order, where.namespace);
  } catch (error) {
    return {
      kind: "stopped",
      ...failure(`listing the ${kind.container.gvk.kind} CRs of ${describe(kind, resource)}`, error),
    };
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
    else
      return {
        kind: "stopped",
        ...failure(`applying the ${kind.container.gvk.kind} CR of ${describe(kind, resource)}`, error),
      };
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

  let listing: GenerationListing;
  try {
    listing = await kind.listGenerations(deps.management, order, place.namespace);
  } catch (error) {
    return { kind: "stopped", ...failure(`listing the children of ${describe(kind, resource)}`, error) };
  }
  const delivered = vouched(await readClaim(), listing.passwordOf);
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
  };
  const now = new Date(deps.clock.now());
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
          await backends.named(childrenOf(listing.generations, asked).backend),
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
  const planned = planGenerations(input, now);
  const deferredMs = rotationDeferral(deps, order, planned);
  const plan = deferredMs > 0 ? deferred(input, planned, deps, order) : planned;
  const held = plan.held?.consumers;
  // A backend that cannot tell reads NaN: held, with no count.
  deps.sweepHolds?.held(order, held === undefined ? undefined : held.known ? held.count : Number.NaN);
  for (const action of plan.actions) {
    try {
      await kind.performAction(deps.management, order, place, action);
    } catch (error) {
      const what = `${action.op === "create" ? "creating" : "deleting"} the ${kind.words.pieces[action.kind]} of generation ${action.generation}`;
      // The rotation state stays as read: the plan's writes did not all happen.
      return { kind: "planned", rotation: status, listing, containers: [], ...failure(what, error) };
    }
  }

  if (plan.swept !== undefined) {
    // A swept generation whose account child was already gone (its finalizer stripped) left its account.
    const swept = childrenOf(listing.generations, plan.swept);
    const known = swept.account.phase === "absent" ? [kind.userName(order, plan.swept)] : [];
    const on = await backends.named(swept.backend);
    if (on.kind === "open")
      await removeStrays(
        kind,
        deps,
        order,
        on.value,
        resource,
        listing,
        keptBy(delivered, plan.status),
        known,
      );
  }
  await releaseContainers(kind, deps, order, { place, containers, listing, policy: spec.deletionPolicy });

  const successor = plan.switchable;
  const backoffKey = `${order.cluster}/${order.namespace}/${order.name}`;
  let decision: SwitchDecision = { status: plan.status, view: plan.view };
  let refused = false;
  if (successor !== undefined) {
    const check =
      deps.successorCheck ??
      ((login: SuccessorLogin, timeoutMs: number) =>
        kind.successorCheck(deps.management, backend, login, timeoutMs));
    const verdict = await check(
      {
        host: backend.endpoint.host,
        port: backend.endpoint.port,
        resource,
        username: kind.userName(order, successor),
        password: listing.passwordOf(successor),
      },
      deps.settings.brokerCheckTimeoutMs,
    );
    decision = decideSwitch(input, plan, verdict, now);
    if (!verdict.accepted) {
      refused = true;
      deps.log.warn({ order: orderKeyOf(order), generation: successor }, verdict.reason);
    }
  }
  refused ||= decision.view.reason === "Failed";
  // A generation in flight, or a sweep, waits for its children's events; the fallback makes sure it
  // is looked at.
  const inFlight =
    plan.target.kind === "first" ||
    plan.target.kind === "continue" ||
    plan.target.kind === "rotate" ||
    sweepUnderWay(plan.status, now);
  let wake: Wake = none;
  if (deferredMs > 0) wake = after(deferredMs, "deadline");
  else if (refused) wake = after(deps.backoff.refused(backoffKey, deps.settings.transientCapMs), "refused");
  // A held sweep asks again soon: nothing is watched that says when the last consumer goes.
  else if (plan.held)
    wake = after(Math.min(REQUEUE.short, Math.max(0, plan.held.until.getTime() - now.getTime())), "waiting");
  // The sweep completed: a rotation it held (a lost piece of the live user, which has no deadline of
  // its own) starts on the next pass, not at the fallback.
  else if (plan.swept !== undefined && plan.target.kind === "held") wake = after(0, "waiting");
  else if (!decision.switchTo && (inFlight || decision.view.status === "False"))
    wake = after(WAITING_FALLBACK_MS, "waiting");
  // A container on a backend the order left waits for that backend's last children, then for its own
  // removal: the order's own deletes bring no pass (their echoes are dropped), so it looks again.
  else if (containers.some((c) => c.name !== place.container)) wake = after(REQUEUE.short, "waiting");
  if (!refused) deps.backoff.forget(backoffKey);
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

/**
 * The generations a stray removal must leave whatever the children say: the one the delivered Secret
 * carries and the live one of the status. A live User child lost (its finalizer stripped, an older
 * snapshot) leaves its broker user the only thing consumers log in with, until a successor is delivered.
 * Without the Secret's word, every account stays.
 */
function keptBy(delivered: DeliveredEvidence, status: RotationStatus): ReadonlySet<number> | "all" {
  if (delivered.kind === "unknown" || delivered.kind === "unvouched") return "all";
  const kept = new Set<number>();
  if (delivered.kind === "carries") kept.add(delivered.generation);
  if (status.passwordGeneration !== undefined) kept.add(status.passwordGeneration);
  return kept;
}

/**
 * Once per sweep: the backend's accounts of the order's naming scheme that no listed generation declares
 * (an account child whose finalizer was stripped leaves a working user behind) are removed, but never
 * one of `kept`. A failure is logged; the next sweep asks again.
 */
async function removeStrays<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  order: OrderIdentity,
  backend: B,
  resource: string,
  listing: GenerationListing,
  kept: ReadonlySet<number> | "all",
  known: readonly string[],
): Promise<void> {
  if (!kind.removeStrayAccounts || kept === "all") return;
  const declared = new Set(
    listing.generations.filter((c) => c.account.phase !== "absent").map((c) => c.generation),
  );
  const stray = (username: string) => {
    const generation = generationOfUser(kind, order, username);
    return generation > 0 && !declared.has(generation) && !kept.has(generation);
  };
  const log = { order: orderKeyOf(order) };
  try {
    const result = deps.strayAccounts
      ? await deps.strayAccounts(resource, stray, known)
      : await kind.removeStrayAccounts(
          deps.management,
          backend,
          resource,
          stray,
          deps.settings.brokerCheckTimeoutMs,
          orderKeyOf(order),
          known,
        );
    if (result.removed.length > 0)
      deps.log.warn({ ...log, removed: result.removed }, "removed accounts no child declares");
    if (result.failure) deps.log.warn(log, `removing stray accounts: ${result.failure}`);
  } catch (error) {
    deps.log.warn(log, `removing stray accounts failed: ${apiErrorText(error)}`);
  }
}

const describe = (kind: OrderKind<Backend>, resource: string): string =>
  `${kind.container.gvk.kind.toLowerCase()} "${resource}"`;

const orderKeyOf = (o: OrderIdentity) => ({ cluster: o.cluster, namespace: o.namespace, name: o.name });
