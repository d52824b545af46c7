// One pass of an order reconciler, whatever the kind. The steps are a list the pass runs in order
// (steps.ts); each sets what it found on the pass's scope and says when it wants to be looked at again.
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
import { admit, readControlPlane } from "./admission.ts";
import {
  CoreReason,
  coreMessages,
  DELIVERY_READY,
  GENERATION_OUT_OF_RANGE,
  INVALID_OBJECT,
  notOk,
} from "./conditions.ts";
import type { ConditionState } from "./types.ts";
import type { OrderDeps } from "./deps.ts";
import { deliver } from "./delivery.ts";
import { apiErrorText } from "./errors.ts";
import { deliveredClaim } from "./evidence.ts";
import { secretReachGate, secretStoreGate, type ClosedGate, type ControlPlaneView } from "./gates.ts";
import { startGrace, untilDeadline, type RotationStatus } from "./generations.ts";
import type { Backend, GenerationListing, OrderKind, OrderObject, OrderStatus } from "./kind.ts";
import { backupPath, GenerationOutOfRange, teardownFinalizer, type OrderIdentity } from "./naming.ts";
import { issuesText, readOrder, stalledStatus } from "./order-schema.ts";
import { reapOrphans } from "./orphans.ts";
import { PassBackends } from "./backends.ts";
import { pausedCondition } from "./pause.ts";
import { childrenOf } from "./generations/children.ts";
import { migrationNote, placementOf } from "./migration.ts";
import { provision } from "./provision.ts";
import { loginsOf } from "./use-evidence.ts";
import { after, backoff, decideRequeue, none, refreshOf, resultOf } from "./requeue.ts";
import { resolveSpec, rotationStatusOf } from "./spec.ts";
import { runSteps, type PassStep } from "./steps.ts";
import { teardown } from "./teardown.ts";
import { assembleStatus, type StatusUpdate } from "./status.ts";
import { shapeOf, writeStatus, type StatusTarget } from "./status-write.ts";

/** What the steps of one pass share: what was read, and what the pass found so far. */
interface Scope<B extends Backend> {
  raw: KubeObject;
  order: OrderObject;
  identity: OrderIdentity;
  controlPlane?: ControlPlaneView;
  backend?: B;
  /** Set by every step that judges the order; a pass that sets none writes no status. */
  update?: StatusUpdate;
  rotation?: RotationStatus;
  listing?: GenerationListing;
  /** The generations step is waiting on something of its own (a child, a refused successor). */
  underWay?: boolean;
  /** A successor the backend accepted, to be delivered in place of the live generation. */
  switchTo?: { generation: number; rotation: RotationStatus; resource: ConditionState } | undefined;
  /** The backends this pass reaches: the ControlPlane's, and those the children still name. */
  backends?: PassBackends<B>;
  /** The backends the order's containers name. */
  containers?: readonly (string | undefined)[];
}

type Step<B extends Backend> = PassStep<Scope<B>>;

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
    const scope: Scope<B> = { raw, order: forPass, identity };
    let decision;
    try {
      decision = await runSteps(steps(kind, deps), scope, [refreshOf(cluster)]);
    } catch (error) {
      if (!(error instanceof GenerationOutOfRange)) throw error;
      return stalled(kind, deps, scope, gate, {
        reason: GENERATION_OUT_OF_RANGE,
        message: error.message,
      });
    }
    if (scope.update) {
      const status = assembled(kind, deps, scope.order, scope.update);
      await writeStatus(kind, deps, scope, status, gate, decision.backoff?.message);
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
  scope: Scope<B>,
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

/** The steps of a pass, in the reference's order. */
function steps<B extends Backend>(kind: OrderKind<B>, deps: OrderDeps): Step<B>[] {
  const closeGate = (scope: Scope<B>, gate: ClosedGate) => {
    const state = notOk(gate.reason, gate.message);
    // Delivery-only gates are judged in the delivery step, never here.
    scope.update = {
      resource: state,
      delivery: gate.scope === "resource" ? keptDelivery(scope.order) : state,
    };
    return { wake: gate.wake, stop: true };
  };

  const consent: Step<B> = async (scope) => {
    const { identity, order } = scope;
    const cp = await readControlPlane(deps.management, {
      ...identity,
      controlPlaneRef: order.spec.controlPlaneRef,
    });
    const admitted = admit(identity, order.spec, cp);
    if (!admitted.open) return closeGate(scope, admitted.gate);
    const reach = secretReachGate(deps.settings.secretNamespaces, identity, admitted.value);
    if (!reach.open) return closeGate(scope, reach.gate);
    scope.controlPlane = admitted.value;
    return { wake: none };
  };

  const finalizer: Step<B> = async (scope) => {
    let added: boolean;
    try {
      added = await deps.home.ensureFinalizer(kind.gvk, scope.raw, teardownFinalizer(kind.naming));
    } catch (error) {
      if (error instanceof TransientError) throw error;
      throw new TransientError(
        `adding the finalizer ${teardownFinalizer(kind.naming)} failed: ${apiErrorText(error)}`,
        { cause: error },
      );
    }
    // The update brings the next pass; this one writes no conditions.
    return { wake: none, stop: added };
  };

  // A paused order keeps what it has (pause.ts). Its teardown is not paused: it runs before the steps.
  const paused: Step<B> = async (scope) => {
    const resource = pausedCondition(scope.order, kind.resourceCondition);
    if (!resource) return { wake: none };
    scope.update = { resource, delivery: keptDelivery(scope.order) };
    return { wake: none, stop: true };
  };

  const backend: Step<B> = async (scope) => {
    const bus = await kind.backend(deps.management, need(scope.controlPlane));
    if (!bus.open) return closeGate(scope, bus.gate);
    scope.backend = bus.value;
    return { wake: none };
  };

  const secretStore: Step<B> = async (scope) => {
    const store = secretStoreGate(await deps.store.health());
    return store.open ? { wake: none } : closeGate(scope, store.gate);
  };

  const generations: Step<B> = async (scope) => {
    const { identity, order } = scope;
    const cp = need(scope.controlPlane);
    const current = need(scope.backend);
    const resource = kind.resource(order, identity);
    scope.backends = new PassBackends(kind, deps.management, cp, current);
    const outcome = await provision(
      kind,
      deps,
      identity,
      { namespace: cp.namespace, backend: current.name, resource },
      resolveSpec(order),
      rotationStatusOf(order.status),
      () => deliveredClaim(deps.home, kind, identity),
      scope.backends,
    );
    if (outcome.kind === "stopped") {
      // Stopped on the way to a backend the order is not on yet: the delivered user stays where it is.
      const on = order.status?.backend;
      const placement =
        on !== undefined && on !== current.name
          ? { backend: on, migration: { from: on, to: current.name, phase: "Provisioning" as const } }
          : undefined;
      const note = migrationNote(kind.backendKind, placement?.migration);
      scope.update = {
        resource: { ...outcome.resource, message: outcome.resource.message + note },
        delivery: keptDelivery(order),
        resourceName: resource,
        placement,
      };
      return { wake: outcome.wake, stop: true };
    }
    scope.containers = outcome.containers;
    const live = outcome.rotation.passwordGeneration ?? 0;
    scope.rotation = outcome.rotation;
    scope.switchTo = outcome.switchTo;
    scope.listing = outcome.listing;
    scope.update = {
      resource: outcome.resource,
      delivery: keptDelivery(order),
      resourceName: resource,
      rotation: { state: outcome.rotation, username: live > 0 ? kind.userName(identity, live) : undefined },
    };
    scope.underWay = outcome.wake.kind !== "none";
    if (outcome.wake.kind === "backoff") {
      // A child write failed: the rotation state stays as read, and nothing is delivered this pass.
      scope.update = { resource: outcome.resource, delivery: keptDelivery(order), resourceName: resource };
      return { wake: outcome.wake, stop: true };
    }
    return { wake: outcome.wake };
  };

  const deadline: Step<B> = async (scope) => {
    const due = untilDeadline(need(scope.rotation), new Date(deps.clock.now()));
    if (due === undefined) return { wake: none };
    if (due > 0) return { wake: after(due, "deadline") };
    // A deadline already past is being acted on (a rotation or a sweep under way). The step that acts
    // says when to look again (a refused successor backs off); otherwise the floor keeps the order from
    // running again at once, and the children's events wake it sooner.
    return { wake: scope.underWay ? none : after(0, "pastDeadline") };
  };

  const delivery: Step<B> = async (scope) => {
    const { identity } = scope;
    const update = need(scope.update);
    const rotation = need(scope.rotation);
    const cp = need(scope.controlPlane);
    const switchTo = scope.switchTo;
    // The generation the Secret is to carry: the accepted successor, else the live one.
    const generation = switchTo?.generation ?? rotation.passwordGeneration ?? 0;
    // The backend the generation's children name: a migration's old one until the switch.
    const on = await need(scope.backends).named(
      generation > 0 ? childrenOf(need(scope.listing).generations, generation).backend : undefined,
    );
    if (on.kind !== "open") {
      // The old backend cannot be read now (or is gone): the Secret stays as it is until the switch.
      update.delivery = keptDelivery(scope.order);
      return { wake: none };
    }
    update.delivery = notOk(CoreReason.WaitingForPassword, coreMessages.waitingForPassword());
    const endpoint = kind.deliveryEndpoint(identity, cp, on.value);
    if (!endpoint.open) {
      update.delivery = notOk(endpoint.gate.reason, endpoint.gate.message);
      return { wake: endpoint.gate.wake };
    }
    if (generation === 0) return { wake: none };
    const username = kind.userName(identity, generation);
    const password = need(scope.listing).passwordOf(generation);
    const data = kind.deliveredData({
      endpoint: endpoint.value,
      resource: kind.resource(scope.order, identity),
      username,
      password,
      backend: on.value,
    });
    // The superseded user's login records, read before the Secret switches: the sweep waits while they
    // grow (a consumer that still logs in with the old credential).
    const superseded = switchTo ? (rotation.passwordGeneration ?? 0) : 0;
    const baseline =
      superseded > 0
        ? await loginsOf(
            kind,
            deps,
            await need(scope.backends).named(childrenOf(need(scope.listing).generations, superseded).backend),
            kind.userName(identity, superseded),
          )
        : undefined;
    const outcome = await deliver(deps.home, deps.store, kind.naming, {
      order: identity,
      data,
      secrets: Object.values(data).filter((v) => v.includes(password) && password !== ""),
      backupPath: backupPath(kind.naming, identity, cp.namespace),
      delivered: kind.messages.delivered(
        `${identity.name}-credentials`,
        identity.namespace,
        identity.cluster,
      ),
    });
    update.delivery = outcome.condition;
    if (outcome.replacedImmutable) await replacedImmutable(deps, identity);
    update.delivered = outcome.delivered
      ? {
          host: endpoint.value.host,
          port: endpoint.value.port,
          secretName: outcome.delivered.secretName,
          secretKeys: Object.keys(data),
        }
      : "none";
    if (outcome.delivered) {
      // The Secret carries the generation: it is the live one now, and its predecessor's grace starts.
      const now = new Date(deps.clock.now());
      const switched = switchTo?.rotation ?? rotation;
      scope.rotation = startGrace(
        resolveSpec(scope.order).rotation,
        baseline?.known ? { ...switched, previousPasswordLogins: baseline.succeeded } : switched,
        now,
      );
      update.rotation = { state: scope.rotation, username };
      if (switchTo) update.resource = switchTo.resource;
    } else if (switchTo) {
      // Not delivered: the status keeps naming the user the Secret still carries.
      update.delivered = undefined;
    }
    return { wake: outcome.wake };
  };

  // Where the order is after this pass: the backend of the generation the Secret carries, and a
  // migration while anything of the order is on another backend.
  const placement: Step<B> = async (scope) => {
    const update = need(scope.update);
    const listing = need(scope.listing);
    const live = update.rotation?.state.passwordGeneration ?? 0;
    update.placement = placementOf({
      current: need(scope.backend).name,
      delivering: live > 0,
      delivered: live > 0 ? childrenOf(listing.generations, live).backend : undefined,
      held: [...need(scope.containers), ...listing.generations.map((c) => c.backend)],
    });
    const note = migrationNote(kind.backendKind, update.placement.migration);
    if (note) update.resource = { ...update.resource, message: update.resource.message + note };
    return { wake: none };
  };

  return [consent, finalizer, paused, backend, secretStore, generations, delivery, placement, deadline];
}

/** Says that the delivered Secret, marked immutable by someone, was replaced so that it carries the live user. */
async function replacedImmutable(deps: OrderDeps, identity: OrderIdentity): Promise<void> {
  const key = { cluster: identity.cluster, namespace: identity.namespace, name: identity.name };
  const message = `Secret ${identity.namespace}/${identity.name}-credentials was marked immutable, which stalls every rotation; it was deleted and made again (without the mark) to carry the live user`;
  deps.log.warn({ order: key }, message);
  try {
    await deps.events.emit(
      { ...key, uid: identity.uid ?? "" },
      { type: "Warning", reason: "DeliveredSecretReplaced", message },
    );
  } catch (error) {
    deps.log.warn({ order: key }, `emitting an event failed: ${apiErrorText(error)}`);
  }
}

function need<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("an order step ran before the step that provides its input");
  return value;
}

/**
 * DeliveryReady on a pass that stops before delivery: the delivered Secret was not looked at, so what the
 * order last said of it stands; an order that never said anything waits for a password.
 */
function keptDelivery(order: OrderObject): ConditionState {
  const before = order.status?.conditions?.find((c) => c.type === DELIVERY_READY);
  if (!before || before.status === "Unknown")
    return notOk(CoreReason.WaitingForPassword, coreMessages.waitingForPassword());
  return {
    status: before.status as ConditionState["status"],
    reason: before.reason,
    message: before.message,
  };
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
