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
import { bindingEndKey, bindingsByEnd, brokerNameKey, endsByBrokerName } from "./binding-ends.ts";
import type { ControllerDeps } from "../deps.ts";
import { managementRequests, readyStatus } from "../../external/index.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import type { TopologyKind, TopologyDesired } from "../backend.ts";

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

export const binding: TopologyKind<Binding, BindingSpec> = {
  kind: bindingKind,
  schema: BindingSchema,
  secretsOf: () => [],
  // A waiting Binding goes on once an end has been reconciled: its other changes wake none.
  watches: (caches) =>
    [exchangeKind, queueKind].map((end) => ({
      kind: end,
      clusters: "management",
      map: (object) => {
        const key = bindingEndKey(object, end === queueKind ? "queue" : "exchange");
        if (readyStatus(object) === undefined || key === undefined) return [];
        const namespace = object.metadata?.namespace ?? "";
        return managementRequests(
          bindingsOf(caches.cachedByIndex("", bindingKind, bindingsByEnd, namespace, key), object),
        );
      },
      update: readyChanged,
    })),
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

interface BrokerEnd {
  vhost?: string;
  name?: string;
}

/**
 * The Bindings among `bindings` that connect the Queue or Exchange `end` (the same namespace and
 * broker vhost, its broker name as source or destination): a binding declared before its ends is
 * refused with a 404 and waits, and the end's change wakes it instead of the retry interval.
 */
export function bindingsOf(bindings: KubeObject[], end: KubeObject): KubeObject[] {
  const spec = (end["spec"] ?? {}) as BrokerEnd;
  if (!spec.name) return [];
  const vhost = spec.vhost ?? "/";
  const isQueue = end.kind === queueKind.kind;
  return bindings.filter((b) => {
    const s = (b["spec"] ?? {}) as BrokerEnd & {
      source?: string;
      destination?: string;
      destinationType?: string;
    };
    if (b.metadata?.namespace !== end.metadata?.namespace || (s.vhost ?? "/") !== vhost) return false;
    const destination = s.destination === spec.name && (s.destinationType === "queue") === isQueue;
    return destination || (!isQueue && s.source === spec.name);
  });
}

/** An update that wrote the object's first Ready condition, or changed its status. */
export function readyChanged(previous: KubeObject, object: KubeObject): boolean {
  const now = readyStatus(object);
  return now !== undefined && now !== readyStatus(previous);
}
