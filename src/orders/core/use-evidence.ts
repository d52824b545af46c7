// Who still uses a superseded user, as the sweep weighs it (connections.ts): its sessions on the backend
// its children name, its logins since the switch where the backend keeps records, and the pods beside
// the order that read the delivered Secret from before the switch.
import type { NamedBackend } from "./backends.ts";
import type { ConnectionCount, LoginCount, UseEvidence } from "./connections.ts";
import type { OrderDeps } from "./deps.ts";
import type { RotationStatus } from "./generations.ts";
import type { Backend, OrderKind } from "./kind.ts";
import { deliveredSecretName, type OrderIdentity } from "./naming.ts";
import { podsOnOldCredential } from "./workloads.ts";

/**
 * Who still uses generation `previous`'s user: its sessions, its logins since the switch (when the backend
 * keeps records and they were read at the switch), and the pods beside the order that read the delivered
 * Secret and were created before the switch. Login records or pods that cannot be read are left out (the
 * sweep then weighs the sessions alone, as without them), and the reason is logged.
 */
export async function useOf<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  order: OrderIdentity,
  status: RotationStatus,
  backend: NamedBackend<B>,
  previous: number,
): Promise<UseEvidence> {
  const username = kind.userName(order, previous);
  const log = { order: orderKeyOf(order), generation: previous };
  const consumers = await connectionsOf(kind, deps, backend, username);
  let loginsSinceSwitch: UseEvidence["loginsSinceSwitch"];
  const baseline = status.previousPasswordLogins;
  if (baseline !== undefined) {
    // Records read at the switch that cannot be read now cannot tell: the sweep holds, as for sessions.
    // The broker forgets its records after a while: a login once seen since the switch stays seen.
    const seen = status.previousPasswordLoginsSince ?? 0;
    const logins = await loginsOf(kind, deps, backend, username);
    if (logins?.known) loginsSinceSwitch = Math.max(seen, logins.succeeded - baseline);
    else if (seen > 0) loginsSinceSwitch = seen;
    else if (logins) loginsSinceSwitch = { unknown: logins.reason };
  }
  let podsBeforeSwitch: string[] | undefined;
  if (status.lastRotation !== undefined) {
    const pods = await podsOnOldCredential(
      deps.home,
      order.namespace,
      deliveredSecretName(order),
      status.lastRotation,
    );
    if ("pods" in pods) podsBeforeSwitch = pods.pods;
    else deps.log.warn(log, `the sweep weighs no pods: ${pods.failure}`);
  }
  return { consumers, loginsSinceSwitch, podsBeforeSwitch };
}

/** The logins of `username` the backend recorded; undefined for a kind whose backend keeps none. */
export async function loginsOf<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  backend: NamedBackend<B>,
  username: string,
): Promise<LoginCount | undefined> {
  if (!kind.loginsOf) return undefined;
  if (backend.kind === "gone") return { known: true, succeeded: 0 };
  if (backend.kind === "closed") return { known: false, reason: backend.message };
  try {
    return await kind.loginsOf(deps.management, backend.value, username, deps.settings.brokerCheckTimeoutMs);
  } catch (error) {
    return { known: false, reason: error instanceof Error ? error.name : "the request failed" };
  }
}

/** Who uses `username` now, as the backend says; a failure to ask is an answer that cannot tell. */
async function connectionsOf<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  backend: NamedBackend<B>,
  username: string,
): Promise<ConnectionCount> {
  const timeoutMs = deps.settings.brokerCheckTimeoutMs;
  // A backend whose object is gone has no sessions left; one not usable now cannot tell.
  if (backend.kind === "gone") return { known: true, count: 0 };
  if (backend.kind === "closed") return { known: false, reason: backend.message };
  try {
    return deps.connections
      ? await deps.connections(username, timeoutMs)
      : await kind.connectionsOf(deps.management, backend.value, username, timeoutMs);
  } catch (error) {
    return { known: false, reason: error instanceof Error ? error.name : "the request failed" };
  }
}

const orderKeyOf = (o: OrderIdentity) => ({ cluster: o.cluster, namespace: o.namespace, name: o.name });
