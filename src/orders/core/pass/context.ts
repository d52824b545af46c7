// One pass of an order as its steps share it (reconcile.ts): the kind and the deps, the order as read,
// and what the steps before found. A step reads what those before it set, records what it found, and
// says when it wants to be looked at again; one that closes a gate ends the pass.
import type { KubeObject } from "../../../runtime/port/kube-rest.ts";
import type { PassBackends } from "../backends.ts";
import { CoreReason, coreMessages, DELIVERY_READY, notOk } from "../conditions.ts";
import type { OrderDeps } from "../deps.ts";
import type { ClosedGate, ControlPlaneView } from "../gates.ts";
import type { RotationStatus } from "../generations.ts";
import type { Backend, GenerationListing, OrderKind, OrderObject } from "../kind.ts";
import type { OrderIdentity } from "../naming.ts";
import type { StatusUpdate } from "../status.ts";
import type { StepResult } from "../steps.ts";
import type { ConditionState } from "../types.ts";

export interface OrderPass<B extends Backend = Backend> {
  kind: OrderKind<B>;
  deps: OrderDeps;
  raw: KubeObject;
  /** The order the pass works on: a mutating gatekeeper plugin's, for this pass only. */
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

/** What a step set before: a step that runs without it is a wrong order of the steps. */
export function need<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("an order step ran before the step that provides its input");
  return value;
}

/** Ends the pass at a closed gate; a delivery-only gate is judged in the delivery step, never here. */
export function closeGate<B extends Backend>(pass: OrderPass<B>, gate: ClosedGate): StepResult {
  const state = notOk(gate.reason, gate.message);
  pass.update = {
    resource: state,
    delivery: gate.scope === "resource" ? keptDelivery(pass.order) : state,
  };
  return { wake: gate.wake, stop: true };
}

/**
 * DeliveryReady on a pass that stops before delivery: the delivered Secret was not looked at, so what the
 * order last said of it stands; an order that never said anything waits for a password.
 */
export function keptDelivery(order: OrderObject): ConditionState {
  const before = order.status?.conditions?.find((c) => c.type === DELIVERY_READY);
  if (!before || before.status === "Unknown")
    return notOk(CoreReason.WaitingForPassword, coreMessages.waitingForPassword());
  return {
    status: before.status as ConditionState["status"],
    reason: before.reason,
    message: before.message,
  };
}
