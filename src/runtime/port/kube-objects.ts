// Small shapes every controller writes through the port: the address part of a parsed object, and the
// controller owner reference of an object it creates.
import { apiVersionOf, type Kind, type KubeObject } from "./kube-rest.ts";

/** The part of an object's metadata these read. */
interface Meta {
  name?: string | undefined;
  namespace?: string | undefined;
  uid?: string | undefined;
  resourceVersion?: string | undefined;
  finalizers?: string[] | undefined;
}

/** A parsed object as the port reads it: its address, resourceVersion, finalizers and status. */
export function asKubeObject(object: { metadata: Meta; status?: unknown }): KubeObject {
  const { name, namespace, resourceVersion, finalizers } = object.metadata;
  return { metadata: { name, namespace, resourceVersion, finalizers }, status: object.status };
}

/** A controller owner reference to `owner`, which blocks the owner's deletion until this object is gone. */
export function controllerReference(kind: Kind, owner: Meta) {
  return {
    apiVersion: apiVersionOf(kind),
    kind: kind.kind,
    name: owner.name ?? "",
    uid: owner.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}
