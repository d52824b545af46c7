// One pass of the RabbitMQVhost order reconciler. The order of the steps is the reference's:
// ClusterNameTooLong → ControlPlane → assignment (frozen) → finalizer → managed bus → secret store →
// Vhost CR → generations (with the broker check before a switch) → delivery → status → requeue.
// A deleted order that holds the finalizer is torn down instead, frozen or not.
import { RabbitMQVhostSchema, rabbitMQVhostKind, type RabbitMQVhost } from "../../api/index.ts";
import {
  messages,
  notOk,
  Reason,
  DELIVERY_READY,
  type ConditionState,
  type ReasonName,
} from "../conditions.ts";
import {
  capRequeue,
  deliveryEndpointGate,
  secretStoreGate,
  type ClosedGate,
  type Requeue,
} from "../gates.ts";
import { requeueAfter } from "../generations.ts";
import { backupPath, userName, vhostName, type OrderIdentity } from "../naming.ts";
import { admit, hasFinalizer, readControlPlane, setFinalizer } from "./admission.ts";
import { passwordOf } from "./children.ts";
import { ReconcileError, type OrderDeps, type ReconcileResult } from "./deps.ts";
import { deliver } from "./delivery.ts";
import { apiErrorText, clientsFor, mergeOptions, readCustom, type Clients } from "./kube.ts";
import { managedBus } from "./messaging.ts";
import { provision } from "./provision.ts";
import { resolveSpec, rotationStatusOf } from "./spec.ts";
import { assembleStatus, statusChanged, statusPatch, transitionEvents, type StatusUpdate } from "./status.ts";
import { teardown } from "./teardown.ts";

export async function reconcileOrder(
  deps: OrderDeps,
  cluster: string,
  namespace: string,
  name: string,
): Promise<ReconcileResult> {
  if (cluster !== deps.orderCluster.name) {
    throw new ReconcileError(
      "terminal",
      `this reconciler serves cluster "${deps.orderCluster.name}", not "${cluster}"`,
    );
  }
  const management = clientsFor(deps.management);
  const home = cluster === "" ? management : clientsFor(deps.orderCluster.config);
  const order = await readOrder(home, namespace, name);
  if (!order) return {};
  const identity: OrderIdentity = { cluster, namespace, name, uid: order.metadata.uid };

  if (order.metadata.deletionTimestamp) {
    return hasFinalizer(order) ? teardown(deps, management, home, order, identity) : {};
  }

  const cp = await readControlPlane(management.custom, {
    ...identity,
    controlPlaneRef: order.spec.controlPlaneRef,
  });
  const admitted = admit(identity, order.spec, cp);
  if (!admitted.open) return closeGate(deps, home, order, identity, admitted.gate);
  if (!hasFinalizer(order)) {
    // The update brings the next pass; this one writes no conditions.
    await setFinalizer(home.custom, order, true);
    return {};
  }
  const controlPlane = admitted.value;

  const bus = await managedBus(management, controlPlane);
  if (!bus.open) return closeGate(deps, home, order, identity, bus.gate);

  const store = secretStoreGate(await deps.store.health());
  if (!store.open) return closeGate(deps, home, order, identity, store.gate);

  const spec = resolveSpec(order);
  const place = { namespace: controlPlane.namespace, rabbitmqCluster: bus.value.rabbitmqCluster.name };
  const rotation = rotationStatusOf(order.status);
  const provisioned = await provision(deps, management, identity, place, spec, rotation, bus.value.endpoint);
  const vhost = vhostName(identity);

  if (provisioned.kind === "stopped" || provisioned.retry !== undefined) {
    const update: StatusUpdate = {
      vhostReady: provisioned.vhostReady,
      deliveryReady: keptDelivery(order),
      vhost,
    };
    const result = await finish(
      deps,
      home,
      order,
      identity,
      update,
      provisioned.kind === "stopped" ? provisioned.requeueAfterMs : undefined,
    );
    if (provisioned.retry !== undefined) throw new ReconcileError("transient", provisioned.retry);
    return result;
  }

  const live = provisioned.rotation.passwordGeneration ?? 0;
  const username = live > 0 ? userName(identity, live) : undefined;
  const update: StatusUpdate = {
    vhostReady: provisioned.vhostReady,
    deliveryReady: notOk(Reason.WaitingForPassword, messages.waitingForPassword()),
    vhost,
    rotation: { state: provisioned.rotation, username },
  };
  let deliveryRequeue: number | undefined;
  const endpoint = deliveryEndpointGate(identity, controlPlane, bus.value);
  if (!endpoint.open) {
    update.deliveryReady = notOk(endpoint.gate.reason, endpoint.gate.message);
  } else if (username !== undefined) {
    const outcome = await deliver(home.core, deps.store, {
      order: identity,
      endpoint: endpoint.value,
      vhost,
      username,
      password: passwordOf(provisioned.listing, live),
      backupPath: backupPath(identity, controlPlane.namespace),
    });
    update.deliveryReady = outcome.condition;
    update.delivery = outcome.delivered ?? "none";
    deliveryRequeue = outcome.requeueAfterMs;
  }
  // A deadline already past (e.g. between the sweep's two passes, while the old User is still being
  // removed) would requeue at once, again and again; the User's own deletion wakes the order anyway.
  const due = requeueAfter(provisioned.rotation, deps.now(), { onTargetCluster: false });
  const rotationDue = due === undefined ? undefined : Math.max(due, MIN_DEADLINE_REQUEUE_MS);
  return finish(deps, home, order, identity, update, earliest(rotationDue, deliveryRequeue));
}

async function readOrder(home: Clients, namespace: string, name: string): Promise<RabbitMQVhost | undefined> {
  let raw: unknown;
  try {
    raw = await readCustom(home.custom, rabbitMQVhostKind, namespace, name);
  } catch (error) {
    throw new ReconcileError(
      "transient",
      `reading RabbitMQVhost ${namespace}/${name} failed: ${apiErrorText(error)}`,
    );
  }
  if (raw === undefined) return undefined;
  const parsed = RabbitMQVhostSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ReconcileError("terminal", `RabbitMQVhost ${namespace}/${name} does not match its schema`);
  }
  return parsed.data;
}

/**
 * DeliveryReady on a pass that stops before delivery: the delivered Secret was not looked at, so what the
 * order last said of it stands; an order that never said anything waits for a password.
 */
function keptDelivery(order: RabbitMQVhost): ConditionState {
  const before = order.status?.conditions?.find((c) => c.type === DELIVERY_READY);
  if (!before || before.status === "Unknown")
    return notOk(Reason.WaitingForPassword, messages.waitingForPassword());
  return { status: before.status, reason: before.reason as ReasonName, message: before.message };
}

/** A closed gate: its conditions, its requeue (a backoff is a retried error once the status is written). */
async function closeGate(
  deps: OrderDeps,
  home: Clients,
  order: RabbitMQVhost,
  identity: OrderIdentity,
  gate: ClosedGate,
): Promise<ReconcileResult> {
  const state = notOk(gate.reason, gate.message);
  const update: StatusUpdate = {
    // Delivery-only gates are judged in the delivery step, never here.
    vhostReady: state,
    deliveryReady: gate.scope === "vhost" ? keptDelivery(order) : state,
  };
  const result = await finish(deps, home, order, identity, update, requeueMs(gate.requeue));
  if (gate.requeue.kind === "backoff") throw new ReconcileError("transient", gate.message);
  return result;
}

const MIN_DEADLINE_REQUEUE_MS = 1_000;

const requeueMs = (r: Requeue): number | undefined => (r.kind === "after" ? r.ms : undefined);

function earliest(...values: (number | undefined)[]): number | undefined {
  const defined = values.filter((v): v is number => v !== undefined);
  return defined.length === 0 ? undefined : Math.min(...defined);
}

/** Writes the status when it changed, emits the transitions' events, and caps the requeue on a target cluster. */
async function finish(
  deps: OrderDeps,
  home: Clients,
  order: RabbitMQVhost,
  identity: OrderIdentity,
  update: StatusUpdate,
  requeue: number | undefined,
): Promise<ReconcileResult> {
  const now = deps.now();
  const next = assembleStatus(order.status, update, order.metadata.generation ?? 0, now);
  const key = { cluster: identity.cluster, namespace: identity.namespace, name: identity.name };
  if (statusChanged(order.status, next)) {
    try {
      await home.custom.patchNamespacedCustomObjectStatus(
        {
          group: rabbitMQVhostKind.group,
          version: rabbitMQVhostKind.version,
          plural: rabbitMQVhostKind.plural,
          namespace: identity.namespace,
          name: identity.name,
          body: { metadata: { resourceVersion: order.metadata.resourceVersion }, status: statusPatch(next) },
        },
        mergeOptions,
      );
    } catch (error) {
      throw new ReconcileError("transient", `writing the status failed: ${apiErrorText(error)}`);
    }
    for (const event of transitionEvents(order.status, next)) {
      deps.log.info({ order: key, reason: event.reason }, event.message);
      try {
        await deps.events.emit({ ...key, uid: identity.uid ?? "" }, event);
      } catch (error) {
        deps.log.warn({ order: key }, `emitting an event failed: ${apiErrorText(error)}`);
      }
    }
  }
  const capped = capRequeue(
    requeue === undefined ? { kind: "none" } : { kind: "after", ms: requeue },
    identity.cluster,
  );
  return { requeueAfterMs: requeueMs(capped) };
}
