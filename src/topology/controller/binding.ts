// Binding: declared by POST (the broker ignores a binding it already has), deleted by the broker's
// properties_key. Every field is the binding's identity.
import { BindingSchema, bindingKind, type Binding } from "../../api/index.ts";
import {
  DEFAULT_VHOST,
  declareBinding,
  deleteBinding,
  readBackBinding,
  type BindingSpec,
} from "../broker/index.ts";
import type { ControllerDeps } from "./deps.ts";
import { reconcileObject, type Desired, type KindHandler } from "./engine.ts";
import type { Result } from "../../runtime/controller.ts";

export function bindingSpec(binding: Binding): Desired<BindingSpec> {
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
  desired: async (_deps, binding) => bindingSpec(binding),
  declare: declareBinding,
  readBack: readBackBinding,
  async remove(_deps, client, binding) {
    const desired = bindingSpec(binding);
    // An invalid binding was never declared.
    if (desired.outcome === "ready") await deleteBinding(client, desired.spec);
  },
};

export function reconcileBinding(deps: ControllerDeps, namespace: string, name: string): Promise<Result> {
  return reconcileObject(bindingHandler, deps, namespace, name);
}
