// One pass of an order reconciler, whatever the kind. The steps are a list the pass runs in order
// (steps.ts), each a function of its own in pass/ over the one context of the pass (pass/context.ts);
// each sets what it found on the context and says when it wants to be looked at again.
// One rule merges those wakes (requeue.ts), and one write, diff-guarded (status-write.ts), stores the
// status at the end of every pass that got past the finalizer; a teardown runs the same way. The order
// of the steps is the reference's: ClusterNameTooLong → ControlPlane → assignment (frozen) → finalizer →
// backend → secret store → container child → generations (with the successor check before a switch) →
// delivery → status → requeue. A deleted order that holds the finalizer is torn down instead, frozen
// or not. The gatekeeper wraps the pass: its entry hooks run on the order as read (a rejection ends the
// pass with Ready GatekeeperRejected), its exit hooks on the status about to be written, on every pass.
import {
  Gatekeeper,
  GATEKEEPER_REJECTED,
  type GatePass,
  type Rejection,
} from "../../gatekeeper/gatekeeper.ts";
import type { Result } from "../../runtime/loop/controller.ts";
import { TerminalError, TransientError } from "../../runtime/base/errors.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import { coreMessages, GENERATION_OUT_OF_RANGE, INVALID_OBJECT, notOk } from "./conditions.ts";
import type { OrderDeps } from "./deps.ts";
import { apiErrorText } from "./errors.ts";
import type { Backend, OrderKind, OrderObject, OrderStatus } from "./kind.ts";
import { GenerationOutOfRange, teardownFinalizer, type OrderIdentity } from "./naming.ts";
import { issuesText, readOrder, stalledStatus } from "./order-schema.ts";
import { reapOrphans } from "./orphans.ts";
import { backend, secretStore } from "./pass/backend.ts";
import { consent } from "./pass/consent.ts";
import { keptDelivery, type OrderPass } from "./pass/context.ts";
import { deadline } from "./pass/deadline.ts";
import { delivery } from "./pass/delivery.ts";
import { finalizer } from "./pass/finalizer.ts";
import { generations } from "./pass/generations.ts";
import { paused } from "./pass/paused.ts";
import { placement } from "./pass/placement.ts";
import { backoff, decideRequeue, refreshOf, resultOf } from "./requeue.ts";
import { rotationNamespace } from "./rotation-rate.ts";
import { runSteps } from "./steps.ts";
import { teardown } from "./teardown.ts";
import { assembleStatus, type StatusUpdate } from "./status.ts";
import { shapeOf, writeStatus, type StatusTarget } from "./status-write.ts";
import type { ConditionState } from "./types.ts";

/**
 * The steps of a pass, in the reference's order (docs/orders.md, One pass): consent, the finalizer, a
 * pause, the backend and the secret store, the children and their generations, delivery, where the
 * order is, and the rotation and sweep deadlines.
 */
const passSteps = [
  consent,
  finalizer,
  paused,
  backend,
  secretStore,
  generations,
  delivery,
  placement,
  deadline,
] as const;

export async function reconcileOrder<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  cluster: string,
  namespace: string,
  name: string,
): Promise<Result> {
  let raw: KubeObject | undefined;
  try {
    raw = await deps.home.get(kind.gvk, { namespace, name });
  } catch (error) {
    throw new TransientError(`reading ${kind.gvk.kind} ${namespace}/${name} failed: ${apiErrorText(error)}`, {
      cause: error,
    });
  }
  // An order gone or being deleted has no rotation to hold back: the leader forgets when it held one.
  if (raw === undefined || raw.metadata?.deletionTimestamp)
    deps.rotations?.release(rotationNamespace({ cluster, namespace }), name);
  if (raw === undefined) return reapOrphans(kind, deps, { cluster, namespace, name });
  // An order back (restored, re-created) ends a sighting of its leftovers: a later loss waits afresh.
  deps.orphans?.sightings.forget({ cluster, namespace, name });
  const { order, issues } = readOrder(kind, raw);
  if (!order)
    throw new TerminalError(
      `${kind.gvk.kind} ${namespace}/${name} does not match its schema: ${issuesText(issues)}`,
    );
  const identity: OrderIdentity = { cluster, namespace, name, uid: order.metadata.uid };
  const finalizer = teardownFinalizer(kind.naming);
  const deleting = order.metadata.deletionTimestamp !== undefined;
  // Deleted, and let go of: nothing to look at again.
  if (deleting && !(order.metadata.finalizers ?? []).includes(finalizer)) return resultOf(decideRequeue([]));

  const gatekeeper = deps.gatekeeper ?? Gatekeeper.empty(deps.log, deps.clock);
  const gate = await gatekeeper.enter(kind.gvk.kind, raw, {
    cluster,
    kube: deps.home,
    management: deps.management,
    log: deps.log,
    teardown: deleting,
  });
  return gate.wrap(async () => {
    // A deletion tears down whatever the schema refuses: it reads only what it can.
    if (deleting) return teardown(kind, deps, raw, order, identity, gate);
    if (issues.length > 0)
      return stalled(kind, deps, { raw, order, identity }, gate, {
        reason: INVALID_OBJECT,
        message: coreMessages.invalidObject(issuesText(issues)),
      });
    if (gate.rejection) return rejected(kind, deps, { raw, order, identity }, gate, gate.rejection);
    // A mutating entry hook's output, for this pass only; it matched the kind's schema.
    const forPass = gate.object === raw ? order : kind.parse(gate.object).order;
    if (!forPass) throw new TerminalError(`the gatekeeper's ${kind.gvk.kind} does not match its schema`);
    const pass: OrderPass<B> = { kind, deps, raw, order: forPass, identity };
    let decision;
    try {
      decision = await runSteps<OrderPass<B>>(passSteps, pass, [refreshOf(cluster)]);
    } catch (error) {
      if (!(error instanceof GenerationOutOfRange)) throw error;
      return stalled(kind, deps, pass, gate, {
        reason: GENERATION_OUT_OF_RANGE,
        message: error.message,
      });
    }
    if (pass.update) {
      const status = assembled(kind, deps, pass.order, pass.update);
      await writeStatus(kind, deps, pass, status, gate, decision.backoff?.message);
    }
    return resultOf(decision);
  });
}

/**
 * A pass a gatekeeper plugin rejected at entry: nothing is provisioned, Ready says which plugin refused
 * and why, the other conditions keep what they said (a new order's resource condition says the same),
 * and the pass fails so that it is retried with backoff.
 */
async function rejected<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  scope: StatusTarget,
  gate: GatePass,
  rejection: Rejection,
): Promise<Result> {
  const refused = notOk(GATEKEEPER_REJECTED, rejection.message);
  const before = scope.order.status?.conditions?.find((c) => c.type === kind.resourceCondition);
  const resource: ConditionState = before
    ? { status: before.status as ConditionState["status"], reason: before.reason, message: before.message }
    : refused;
  const update = { resource, delivery: keptDelivery(scope.order), ready: refused };
  await writeStatus(kind, deps, scope, assembled(kind, deps, scope.order, update), gate);
  return resultOf(decideRequeue([backoff(rejection.message, rejection.retryAfterMs)]));
}

/**
 * A pass that cannot run on this order (a field its schema refuses, a generation past the largest the
 * operator holds): nothing is provisioned, rotated or delivered, Ready and Stalled say why, and the pass
 * fails terminally (the next change of the order, or the backstop, brings it again).
 */
async function stalled<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  target: StatusTarget,
  gate: GatePass,
  why: { reason: string; message: string },
): Promise<Result> {
  const stored = (target.raw["status"] ?? undefined) as OrderStatus | undefined;
  const generation = target.order.metadata.generation ?? 0;
  const status = stalledStatus(stored, notOk(why.reason, why.message), generation, deps.clock.now());
  await writeStatus(kind, deps, { ...target, order: { ...target.order, status: stored } }, status, gate);
  throw new TerminalError(
    `${kind.gvk.kind} ${target.identity.namespace}/${target.identity.name}: ${why.message}`,
  );
}

/** The status a pass found, assembled over what the order holds. */
function assembled<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  order: OrderObject,
  update: StatusUpdate,
): OrderStatus {
  return assembleStatus(
    shapeOf(kind),
    order.status,
    update,
    order.metadata.generation ?? 0,
    new Date(deps.clock.now()),
    order.spec.passwordGeneration,
  );
}
