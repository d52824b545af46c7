// Provisioning: the Vhost CR, then the password generations (plan → actions → pre-switch broker check →
// switch decision). Returns VhostReady and the rotation state for the status; a Kubernetes-level failure
// reads VhostError and is retried with backoff.
import { messages, notOk, Reason, REQUEUE, type ConditionState } from "../conditions.ts";
import type { Endpoint } from "../endpoint.ts";
import {
  childStateOf,
  decideSwitch,
  planGenerations,
  type GenerationInput,
  type RotationStatus,
} from "../generations.ts";
import { userName, vhostName, type OrderIdentity } from "../naming.ts";
import { amqpLoginCheck } from "./broker-check.ts";
import {
  applyVhost,
  ChildError,
  generationsOf,
  listChildren,
  passwordOf,
  performAction,
  type ChildPlace,
  type Listing,
} from "./children.ts";
import type { OrderDeps } from "./deps.ts";
import { apiErrorText, notServed, type Clients } from "./kube.ts";
import type { ResolvedSpec } from "./spec.ts";

export type ProvisionOutcome =
  /** Stopped before the generations: the rotation state is unchanged. */
  | {
      kind: "stopped";
      vhostReady: ConditionState;
      requeueAfterMs?: number | undefined;
      retry?: string | undefined;
    }
  | {
      kind: "planned";
      vhostReady: ConditionState;
      rotation: RotationStatus;
      listing: Listing;
      /** Set when the pass failed writing a child: retried with backoff after the status is written. */
      retry?: string | undefined;
    };

export async function provision(
  deps: OrderDeps,
  clients: Clients,
  order: OrderIdentity,
  place: ChildPlace,
  spec: ResolvedSpec,
  status: RotationStatus,
  broker: Endpoint,
): Promise<ProvisionOutcome> {
  const vhost = vhostName(order);
  const childFailure = (what: string, error: unknown): ProvisionOutcome => {
    const message =
      error instanceof ChildError ? error.message : messages.childError(what, apiErrorText(error));
    return { kind: "stopped", vhostReady: notOk(Reason.VhostError, message), retry: message };
  };

  let applied;
  try {
    applied = await applyVhost(clients, order, place, spec.vhostDeletionPolicy, notServed);
  } catch (error) {
    return childFailure(`applying the Vhost CR of vhost "${vhost}"`, error);
  }
  if (applied.kind === "notServed") {
    const vhostReady = notOk(Reason.TopologyOperatorNotInstalled, messages.topologyOperatorNotInstalled());
    return { kind: "stopped", vhostReady, requeueAfterMs: REQUEUE.long };
  }
  const state = childStateOf(applied.object);
  if (state.phase === "refused") {
    return {
      kind: "stopped",
      vhostReady: notOk(Reason.VhostFailed, messages.vhostFailed(vhost, state.message)),
    };
  }
  if (state.phase !== "ready") {
    return { kind: "stopped", vhostReady: notOk(Reason.WaitingForVhost, messages.waitingForVhost(vhost)) };
  }

  let listing: Listing;
  try {
    listing = await listChildren(clients, order, place.namespace);
  } catch (error) {
    return childFailure(`listing the children of vhost "${vhost}"`, error);
  }
  const input: GenerationInput = {
    spec: spec.rotation,
    status,
    children: generationsOf(listing),
    vhost,
    userName: (n) => userName(order, n),
  };
  const now = deps.now();
  const plan = planGenerations(input, now);
  for (const action of plan.actions) {
    try {
      await performAction(clients, order, place, action);
    } catch (error) {
      const what = `${action.op === "create" ? "creating" : "deleting"} the ${action.kind} of generation ${action.generation}`;
      const failed = childFailure(what, error);
      // The rotation state stays as read: the plan's writes did not all happen.
      return { ...failed, kind: "planned", rotation: status, listing };
    }
  }

  const successor = plan.switchable;
  let decision = { switched: false, status: plan.status, view: plan.view };
  if (successor !== undefined) {
    const check = deps.brokerCheck ?? amqpLoginCheck;
    const verdict = await check(
      {
        host: broker.host,
        port: broker.port,
        vhost,
        username: userName(order, successor),
        password: passwordOf(listing, successor),
      },
      deps.settings.brokerCheckTimeoutMs,
    );
    decision = decideSwitch(input, plan, verdict, now);
    if (!verdict.accepted) deps.log.warn({ order: orderKeyOf(order), generation: successor }, verdict.reason);
  }
  const vhostReady: ConditionState = {
    status: decision.view.status,
    reason: Reason[decision.view.reason],
    message: decision.view.message,
  };
  return { kind: "planned", vhostReady, rotation: decision.status, listing };
}

const orderKeyOf = (o: OrderIdentity) => ({ cluster: o.cluster, namespace: o.namespace, name: o.name });
