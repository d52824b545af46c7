// Binding: declared by POST (the broker ignores a binding it already has), deleted by the broker's
// properties_key. Every field is the binding's identity.
import { listedBinding } from "../broker/listed-compare.ts";
import { BindingSchema, bindingKind, exchangeKind, queueKind, type Binding } from "../../api/index.ts";
import {
  DEFAULT_VHOST,
  declareBinding,
  deleteBinding,
  readBackBinding,
  type BindingSpec,
} from "../broker/index.ts";
import { brokerNameKey, endsByBrokerName } from "./binding-ends.ts";
import type { ControllerDeps } from "./deps.ts";
import { readyStatus } from "../../external/index.ts";
import { topologyHandler, type KindHandler, type TopologyDesired } from "./handler.ts";
import type { Result } from "../../runtime/loop/controller.ts";
import { reconcileWith } from "../../external/index.ts";

export function bindingSpec(binding: Binding): TopologyDesired<BindingSpec> {
  const { spec } = binding;
  if (!spec.source) return { outcome: "invalid", reason: "spec.source is required" };
  if (!spec.destination) return { outcome: "invalid", reason: "spec.destination is required" };
  if (!spec.destinationType) return { outcome: "invalid", reason: "spec.destinationType is required" };
  return {
    outcome: "ready",
    spec: {
      vhost: spec.vhost ?? DEFAULT_VHOST,
      source: spec.source,
      destination: spec.destination,
      destinationType: spec.destinationType,
      routingKey: spec.routingKey ?? "",
      arguments: spec.arguments ?? {},
    },
  };
}

export const bindingHandler: KindHandler<Binding, BindingSpec> = {
  kind: bindingKind,
  schema: BindingSchema,
  secretsOf: () => [],
  async desired(deps, binding) {
    const desired = bindingSpec(binding);
    if (desired.outcome !== "ready") return desired;
    const waitMs = youngFor(deps, binding);
    const pending = waitMs > 0 ? await pendingEnd(deps, binding, desired.spec) : undefined;
    return pending ? { outcome: "deferred", reason: pending, retryAfterMs: waitMs } : desired;
  },
  declare: declareBinding,
  readBack: readBackBinding,
  listed: listedBinding,
  async remove(_deps, client, binding) {
    const desired = bindingSpec(binding);
    // An invalid binding was never declared.
    if (desired.outcome === "ready") await deleteBinding(client, desired.spec);
  },
};

/**
 * How much longer `binding` may wait quietly for its ends: up to the verification period from its
 * creation, a bound for an end object that no controller ever reconciles.
 */
function youngFor(deps: ControllerDeps, binding: Binding): number {
  const created = binding.metadata.creationTimestamp;
  if (created === undefined) return 0;
  const at = typeof created === "string" ? Date.parse(created) : created.getTime();
  return Number.isNaN(at) ? 0 : at + deps.settings.verificationPeriodMs - deps.clock.now();
}

/**
 * The Queue or Exchange object beside `binding` that declares one of its ends and has not been
 * reconciled yet (no Ready condition), as a reason; undefined when every end object has one (Ready
 * or failing: then the broker says whether the binding can be declared) or is not an object here.
 */
async function pendingEnd(
  deps: ControllerDeps,
  binding: Binding,
  spec: BindingSpec,
): Promise<string | undefined> {
  const namespace = binding.metadata.namespace ?? "";
  const ends = [
    { kind: exchangeKind, name: spec.source },
    { kind: spec.destinationType === "queue" ? queueKind : exchangeKind, name: spec.destination },
  ];
  for (const end of ends) {
    const key = brokerNameKey(spec.vhost, end.name);
    const objects = await deps.kube.listByIndex(end.kind, namespace, endsByBrokerName, key);
    const pending = objects.find((o) => {
      const endSpec = (o["spec"] ?? {}) as { name?: string; vhost?: string };
      return (
        endSpec.name === end.name &&
        (endSpec.vhost ?? DEFAULT_VHOST) === spec.vhost &&
        readyStatus(o) === undefined
      );
    });
    if (pending) return `${end.kind.kind} ${pending.metadata?.name ?? ""} is not reconciled yet`;
  }
  return undefined;
}

export function reconcileBinding(deps: ControllerDeps, namespace: string, name: string): Promise<Result> {
  return reconcileWith(topologyHandler, bindingHandler, deps, namespace, name);
}
