// Delivery: the generation the Secret is to carry (an accepted successor, else the live one) on the
// backend its children name, the endpoint, the backup confirmed, then the Secret by server-side apply
// (../delivery.ts). Once the Secret carries a generation it is the live one, and its predecessor's
// grace starts.
import { CoreReason, coreMessages, notOk } from "../conditions.ts";
import type { LoginCount } from "../connections.ts";
import { deliver, type DeliveryOutcome } from "../delivery.ts";
import type { OrderDeps } from "../deps.ts";
import type { Endpoint } from "../endpoint.ts";
import { apiErrorText } from "../errors.ts";
import { startGrace } from "../generations.ts";
import { childrenOf } from "../generations/children.ts";
import type { Backend } from "../kind.ts";
import { backupPath, type OrderIdentity } from "../naming.ts";
import { none } from "../requeue.ts";
import { resolveSpec } from "../spec.ts";
import type { StepResult } from "../steps.ts";
import { loginsOf } from "../use-evidence.ts";
import { keptDelivery, need, type OrderPass } from "./context.ts";

export async function delivery<B extends Backend>(pass: OrderPass<B>): Promise<StepResult> {
  const { kind, deps, identity } = pass;
  const update = need(pass.update);
  const rotation = need(pass.rotation);
  // The generation the Secret is to carry: the accepted successor, else the live one.
  const generation = pass.switchTo?.generation ?? rotation.passwordGeneration ?? 0;
  // The backend the generation's children name: a migration's old one until the switch.
  const on = await need(pass.backends).named(
    generation > 0 ? childrenOf(need(pass.listing).generations, generation).backend : undefined,
  );
  if (on.kind !== "open") {
    // The old backend cannot be read now (or is gone): the Secret stays as it is until the switch.
    update.delivery = keptDelivery(pass.order);
    return { wake: none };
  }
  update.delivery = notOk(CoreReason.WaitingForPassword, coreMessages.waitingForPassword());
  const endpoint = kind.deliveryEndpoint(identity, need(pass.controlPlane), on.value);
  if (!endpoint.open) {
    update.delivery = notOk(endpoint.gate.reason, endpoint.gate.message);
    return { wake: endpoint.gate.wake };
  }
  if (generation === 0) return { wake: none };
  const username = kind.userName(identity, generation);
  const password = need(pass.listing).passwordOf(generation);
  const data = kind.deliveredData({
    endpoint: endpoint.value,
    resource: kind.resource(pass.order, identity),
    username,
    password,
    backend: on.value,
  });
  const baseline = await supersededLogins(pass);
  const outcome = await deliver(deps.home, deps.store, kind.naming, {
    order: identity,
    data,
    secrets: Object.values(data).filter((v) => v.includes(password) && password !== ""),
    backupPath: backupPath(kind.naming, identity, need(pass.controlPlane).namespace),
    generation,
    delivered: kind.messages.delivered(`${identity.name}-credentials`, identity.namespace, identity.cluster),
  });
  update.delivery = outcome.condition;
  if (outcome.replacedImmutable) await replacedImmutable(deps, identity);
  delivered(pass, outcome, { endpoint: endpoint.value, keys: Object.keys(data), username, baseline });
  return { wake: outcome.wake };
}

/**
 * The superseded user's login records, read before the Secret switches: the sweep waits while they
 * grow (a consumer that still logs in with the old credential).
 */
async function supersededLogins<B extends Backend>(pass: OrderPass<B>): Promise<LoginCount | undefined> {
  const superseded = pass.switchTo ? (need(pass.rotation).passwordGeneration ?? 0) : 0;
  if (superseded === 0) return undefined;
  const backend = childrenOf(need(pass.listing).generations, superseded).backend;
  return loginsOf(
    pass.kind,
    pass.deps,
    await need(pass.backends).named(backend),
    pass.kind.userName(pass.identity, superseded),
  );
}

/** Records on the status what the Secret carries now, and starts the predecessor's grace. */
function delivered<B extends Backend>(
  pass: OrderPass<B>,
  outcome: DeliveryOutcome,
  what: { endpoint: Endpoint; keys: string[]; username: string; baseline: LoginCount | undefined },
): void {
  const update = need(pass.update);
  const switchTo = pass.switchTo;
  update.delivered = outcome.delivered
    ? {
        host: what.endpoint.host,
        port: what.endpoint.port,
        secretName: outcome.delivered.secretName,
        secretKeys: what.keys,
      }
    : "none";
  if (outcome.delivered) {
    // The Secret carries the generation: it is the live one now, and its predecessor's grace starts.
    const now = new Date(pass.deps.clock.now());
    const switched = switchTo?.rotation ?? need(pass.rotation);
    const baseline = what.baseline;
    pass.rotation = startGrace(
      resolveSpec(pass.order).rotation,
      baseline?.known ? { ...switched, previousPasswordLogins: baseline.succeeded } : switched,
      now,
    );
    update.rotation = { state: pass.rotation, username: what.username };
    if (switchTo) update.resource = switchTo.resource;
  } else if (switchTo) {
    // Not delivered: the status keeps naming the user the Secret still carries.
    update.delivered = undefined;
  }
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
