// The one status write of an order pass, whether it reconciled the order or tore it down: the
// gatekeeper's exit hooks see the status about to be written (theirs is what is written), the port
// writes it only when it changed, and its transitions become Events. A failed write fails the pass.
import type { GatePass } from "../../gatekeeper/gatekeeper.ts";
import { TransientError } from "../../runtime/base/errors.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import type { OrderDeps } from "./deps.ts";
import { apiErrorText } from "./errors.ts";
import type { Backend, OrderKind, OrderObject, OrderStatus } from "./kind.ts";
import type { OrderIdentity } from "./naming.ts";
import { statusChanged, transitionEvents, type StatusShape } from "./status.ts";

/** The order a status is written to: as read (`raw`), as parsed, and who it is. */
export interface StatusTarget {
  raw: KubeObject;
  order: OrderObject;
  identity: OrderIdentity;
}

export const shapeOf = (kind: OrderKind<Backend>): StatusShape => ({
  resourceCondition: kind.resourceCondition,
  resourceStatusField: kind.resourceStatusField,
  deliveredKeys: kind.deliveredKeys,
  allReady: kind.messages.allReady(),
  backendKind: kind.backendKind,
  loginRecords: kind.loginsOf !== undefined,
  eventTypes: kind.eventTypes,
});

/** Writes `status` if it changed; `failure` is the pass's retried error, for the exit hooks. */
export async function writeStatus<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  target: StatusTarget,
  status: OrderStatus,
  gate: GatePass,
  failure?: string,
): Promise<void> {
  const { order, identity, raw } = target;
  const shape = shapeOf(kind);
  const next = await gate.exit(status, failure);
  if (!statusChanged(shape, order.status, next)) return;
  try {
    await deps.home.patchStatus(kind.gvk, raw, next);
  } catch (error) {
    if (error instanceof TransientError) throw error;
    throw new TransientError(`writing the status failed: ${apiErrorText(error)}`, { cause: error });
  }
  const key = { cluster: identity.cluster, namespace: identity.namespace, name: identity.name };
  for (const event of transitionEvents(shape, order.status, next)) {
    deps.log.info({ order: key, reason: event.reason }, event.message);
    try {
      await deps.events.emit({ ...key, uid: identity.uid ?? "" }, event);
    } catch (error) {
      deps.log.warn({ order: key }, `emitting an event failed: ${apiErrorText(error)}`);
    }
  }
}
