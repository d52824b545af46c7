// The seven kinds as a table a wiring layer iterates over: one informer and work queue per kind,
// keyed `namespace/name`, calling `reconcile`; a labelled Secret's change enqueues the objects whose
// `secretsOf` names it; a User's change enqueues the Permissions `dependsOn` names.
import type { KindRef } from "../../api/index.ts";
import { bindingHandler, reconcileBinding } from "./binding.ts";
import type { ControllerDeps } from "./deps.ts";
import type { Result } from "../../runtime/controller.ts";
import type { TopologyObject } from "./engine.ts";
import { exchangeHandler, reconcileExchange } from "./exchange.ts";
import { permissionDependsOn, permissionHandler, reconcilePermission } from "./permission.ts";
import { policyHandler, reconcilePolicy } from "./policy.ts";
import { queueHandler, reconcileQueue } from "./queue.ts";
import { reconcileUser, userHandler } from "./user.ts";
import { reconcileVhost, vhostHandler } from "./vhost.ts";

export interface TopologyKind {
  kind: KindRef;
  reconcile(deps: ControllerDeps, namespace: string, name: string): Promise<Result>;
  /**
   * The Secrets whose change must re-reconcile the object, computed from it as an informer holds it:
   * a User's imported credentials beside it, and a connection Secret in the reference's namespace.
   */
  secretsOf(object: unknown): SecretRef[];
  /** Other topology objects (same namespace) whose change must re-reconcile this one. */
  dependsOn(object: unknown): { kind: string; name: string }[];
}

export interface SecretRef {
  namespace: string;
  name: string;
}

interface Handler {
  kind: KindRef;
  schema: { safeParse(value: unknown): { success: true; data: TopologyObject } | { success: false } };
  secretsOf(object: never): string[];
}

function entry(
  handler: Handler,
  reconcile: TopologyKind["reconcile"],
  dependsOn: (object: never) => { kind: string; name: string }[] = () => [],
): TopologyKind {
  // An informer replaces an object on every change and never alters one it holds, so a parse is kept
  // per object: a labelled Secret's change asks every cached object of every kind what it names.
  const parsedOnce = new WeakMap<object, TopologyObject | undefined>();
  const parse = (object: unknown) => {
    if (typeof object !== "object" || object === null) return undefined;
    if (parsedOnce.has(object)) return parsedOnce.get(object);
    const parsed = handler.schema.safeParse(object);
    const result = parsed.success ? parsed.data : undefined;
    parsedOnce.set(object, result);
    return result;
  };
  return {
    kind: handler.kind,
    reconcile,
    secretsOf(object) {
      const parsed = parse(object);
      if (!parsed) return [];
      const own = parsed.metadata.namespace ?? "";
      const { connectionSecret, namespace } = parsed.spec.rabbitmqClusterReference;
      return [
        ...handler.secretsOf(parsed as never).map((name) => ({ namespace: own, name })),
        ...(connectionSecret ? [{ namespace: namespace || own, name: connectionSecret.name }] : []),
      ];
    },
    dependsOn(object) {
      const parsed = parse(object);
      return parsed ? dependsOn(parsed as never) : [];
    },
  };
}

/** In the order a first sweep should go: a permission needs its vhost, a binding its ends. */
export const topologyControllerKinds: readonly TopologyKind[] = [
  entry(vhostHandler, reconcileVhost),
  entry(userHandler, reconcileUser),
  entry(permissionHandler, reconcilePermission, permissionDependsOn),
  entry(exchangeHandler, reconcileExchange),
  entry(queueHandler, reconcileQueue),
  entry(bindingHandler, reconcileBinding),
  entry(policyHandler, reconcilePolicy),
];
