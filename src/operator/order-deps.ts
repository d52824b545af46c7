// The dependencies of an order kind's controller (orders/core/controller.ts), built from the settings:
// its Events through the recorder, the rotation and held-sweep metrics, the orphan reaper's delay and
// the refused successors' backoff.
import { NamespaceRotations } from "../orders/core/rotation-rate.ts";
import type { KindRef } from "../api/index.ts";
import type { CredentialStore } from "../backup/store.ts";
import type { Gatekeeper } from "../gatekeeper/gatekeeper.ts";
import type { OrderControllerDeps } from "../orders/core/controller.ts";
import type { EventSink } from "../orders/core/deps.ts";
import type { Backend, OrderKind } from "../orders/core/kind.ts";
import { OrphanSightings } from "../orders/core/orphan-sightings.ts";
import { SuccessorBackoff } from "../orders/core/requeue.ts";
import type { Clock } from "../runtime/base/clock.ts";
import type { EventRecorder } from "../runtime/port/events.ts";
import type { Manager } from "../runtime/process/manager.ts";
import { sweepHoldReport, type DomainMetrics } from "./domain-metrics.ts";
import type { OperatorConfig } from "./settings.ts";

export interface OrderWiring {
  manager: Manager;
  store: CredentialStore;
  metrics: DomainMetrics;
  clock: Clock;
  events: EventRecorder;
  gatekeeper: Gatekeeper;
}

/** The per-process backoff of refused successors, each refusal counted as a refused rotation. */
function countedBackoff(metrics: DomainMetrics, kind: string): SuccessorBackoff {
  return new (class extends SuccessorBackoff {
    override refused(key: string, capMs: number): number {
      metrics.rotations.inc({ kind, result: "refused" });
      return super.refused(key, capMs);
    }
  })();
}

function eventSink(
  manager: Manager,
  events: EventRecorder,
  kind: KindRef,
  metrics: DomainMetrics,
): EventSink {
  return {
    async emit(target, event) {
      if (event.reason === "Rotated") metrics.rotations.inc({ kind: kind.kind, result: "completed" });
      // On a target cluster too: deploy/target-cluster-access grants events in the namespaces it assigns.
      const rest = manager.cluster(target.cluster)?.rest;
      if (!rest) return;
      // Not awaited: the recorder logs a failure and never throws, and the pass need not wait for an
      // Event's write (a transition pass records up to three) before its worker takes the next order.
      void events.emit(
        rest,
        kind,
        { metadata: { name: target.name, namespace: target.namespace, uid: target.uid } },
        { type: event.type, reason: event.reason, action: "Reconcile", note: event.message },
      );
    },
  };
}

export function orderControllerDeps<B extends Backend>(
  kind: OrderKind<B>,
  config: OperatorConfig,
  wiring: OrderWiring,
): OrderControllerDeps {
  const { manager, store, clock, events, metrics, gatekeeper } = wiring;
  return {
    manager,
    clock,
    workers: config["order-concurrent-reconciles"],
    pass: {
      store,
      events: eventSink(manager, events, kind.gvk, metrics),
      settings: {
        brokerCheckTimeoutMs: config["broker-check-timeout"],
        // The runtime's transient requeue interval: the cap of a refused successor's backoff.
        transientCapMs: config["transient-requeue-interval"],
        sweepHoldMs: config["sweep-hold"],
        secretNamespaces: config["secret-namespaces"],
      },
      sweepHolds: sweepHoldReport(metrics, kind.gvk.kind),
      rotations: new NamespaceRotations(
        { limit: config["namespace-rotation-limit"], windowMs: config["namespace-rotation-window"] },
        clock,
      ),
      orphans: { delayMs: config["orphan-removal-delay"], sightings: new OrphanSightings() },
      backoff: countedBackoff(metrics, kind.gvk.kind),
      gatekeeper,
    },
  };
}
