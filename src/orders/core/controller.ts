// An order kind's controller: its orders on every engaged cluster, woken by what watches.ts declares.
// Each pass gets the port of its cluster and of the management cluster, bound to the reconcile's
// signal and recording the pass's own writes, and the reconcile's logger; the teardown of a deleted
// order says Deleting and Deleted through the controller's one memory of them (teardown-events.ts).
import type { Clock } from "../../runtime/base/clock.ts";
import type { Manager } from "../../runtime/process/manager.ts";
import type { ControllerSpec } from "../../runtime/process/controller-declaration.ts";
import { OwnWrites } from "../../runtime/port/own-writes.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import type { OrderDeps } from "./deps.ts";
import { SWEEP_HELD_MARK } from "./generations.ts";
import type { Backend, OrderKind } from "./kind.ts";
import { reconcileOrder } from "./reconcile.ts";
import { TeardownEvents } from "./teardown-events.ts";
import { orderWatches, type OrderCaches } from "./watches.ts";

export interface OrderControllerDeps {
  /** The ports and caches of the engaged clusters. */
  manager: OrderCaches & Pick<Manager, "kube">;
  /** What every pass shares; the ports and the logger are each pass's own. */
  pass: Omit<OrderDeps, "management" | "home" | "log" | "clock">;
  clock: Clock;
  /** Workers of the controller. */
  workers: number;
}

/** How soon an order whose cache is behind its own status write is looked at again. */
const CATCH_UP_MS = 100;

/**
 * Whether a deadline of the order's status has come: its scheduled rotation (status.nextRotation passed
 * and not yet switched) or the sweep of its superseded generation (previousPasswordDeleteAt passed and
 * the generation not yet swept). The pass its timer brings, and those of the rotation or the sweep it
 * starts, go before the routine checks of converged orders: a sweep ranked routine went one at a time
 * behind the deletions of its own children. A sweep held for the superseded user's last consumer waits
 * on the consumer, not on the operator: its checks every few seconds are routine.
 */
export function workDue(order: KubeObject, nowMs: number): boolean {
  const status = order["status"] as
    | {
        nextRotation?: unknown;
        previousPasswordGeneration?: unknown;
        previousPasswordDeleteAt?: unknown;
        conditions?: { message?: unknown }[];
      }
    | undefined;
  const passed = (time: unknown) => typeof time === "string" && Date.parse(time) <= nowMs;
  if (passed(status?.nextRotation)) return true;
  if (typeof status?.previousPasswordGeneration !== "number" || !passed(status.previousPasswordDeleteAt))
    return false;
  const held = status.conditions?.some(
    (c) => typeof c.message === "string" && c.message.includes(SWEEP_HELD_MARK),
  );
  return held !== true;
}

export function orderController<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderControllerDeps,
): ControllerSpec {
  const { manager, clock } = deps;
  const teardownEvents = new TeardownEvents(deps.pass.events);
  // The children and Secrets a pass wrote: the watch event of that write brings no pass of its own.
  const own = new OwnWrites(clock);
  return {
    name: kind.controller,
    workers: deps.workers,
    watches: orderWatches(kind, manager, own),
    due: workDue,
    async reconcile(request, context) {
      const cachedHome = manager.kube(request.cluster, context.signal);
      const cachedManagement = manager.kube("", context.signal);
      if (!cachedHome || !cachedManagement) return; // the cluster is no longer engaged; its informers are gone too
      const cached = await cachedHome.get(kind.gvk, request);
      // The cache has not seen this order's last status write yet: a pass now would redo the last one's
      // work on an outdated status and fail at its write. The write's watch event is moments away.
      if (cached && own.isBehind(request.cluster, kind.gvk, cached)) return { requeueAfterMs: CATCH_UP_MS };
      const home = own.recording(cachedHome, request.cluster);
      const management = own.recording(cachedManagement, "");
      return reconcileOrder(
        kind,
        {
          ...deps.pass,
          management,
          home,
          clock,
          queuedAt: context.queuedAt,
          log: context.log,
          teardownEvents,
        },
        request.cluster,
        request.namespace,
        request.name,
      );
    },
  };
}
