// The seven kinds as a table a wiring layer iterates over: one informer and work queue per kind,
// keyed `namespace/name`, calling `reconcile`; a labelled Secret's change enqueues the objects whose
// `secretsOf` names it; a User's change enqueues the Permissions `dependsOn` names.
import type { KindRef } from "../../api/index.ts";
import { bindingHandler, reconcileBinding } from "./binding.ts";
import type { ControllerDeps } from "./deps.ts";
import type { Result } from "../../runtime/loop/controller.ts";
import { fieldsOf, referencedName, type RawFields } from "./raw-fields.ts";
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
  secretsOf(spec: RawFields): string[];
}

// Both read the object as the informer holds it, without a schema: they are asked of every cached
// object of a kind on each change of a labelled Secret, and a parse of each would be a copy of it, made
// every time or kept beside the cache. An object that fails its schema names what it seems to; its pass
// reports the schema error.
function entry(
  handler: Handler,
  reconcile: TopologyKind["reconcile"],
  dependsOn: (spec: RawFields) => { kind: string; name: string }[] = () => [],
): TopologyKind {
  return {
    kind: handler.kind,
    reconcile,
    secretsOf(object) {
      const spec = fieldsOf(fieldsOf(object)?.["spec"]);
      if (!spec) return [];
      const own = namespaceOf(object);
      const reference = fieldsOf(spec["rabbitmqClusterReference"]);
      const connection = referencedName(reference?.["connectionSecret"]);
      const elsewhere = reference?.["namespace"];
      const connectionNamespace = typeof elsewhere === "string" && elsewhere !== "" ? elsewhere : own;
      return [
        ...handler.secretsOf(spec).map((name) => ({ namespace: own, name })),
        ...(connection ? [{ namespace: connectionNamespace, name: connection }] : []),
      ];
    },
    dependsOn(object) {
      const spec = fieldsOf(fieldsOf(object)?.["spec"]);
      return spec ? dependsOn(spec) : [];
    },
  };
}

function namespaceOf(object: unknown): string {
  const namespace = fieldsOf(fieldsOf(object)?.["metadata"])?.["namespace"];
  return typeof namespace === "string" ? namespace : "";
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
