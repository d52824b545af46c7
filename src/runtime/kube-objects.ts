// Small shapes every controller writes through the port: the address part of a parsed object, and the
// controller owner reference of an object it creates.
import type { KindRef, ObjectMeta } from "../api/index.ts";
import type { KubeObject } from "./kube-rest.ts";

/** A parsed object as the port reads it: its address, resourceVersion, finalizers and status. */
export function asKubeObject(object: { metadata: ObjectMeta; status?: unknown }): KubeObject {
  const { name, namespace, resourceVersion, finalizers } = object.metadata;
  return { metadata: { name, namespace, resourceVersion, finalizers }, status: object.status };
}

/** A controller owner reference to `owner`, which blocks the owner's deletion until this object is gone. */
export function controllerReference(kind: KindRef, owner: ObjectMeta) {
  return {
    apiVersion: kind.apiVersion,
    kind: kind.kind,
    name: owner.name ?? "",
    uid: owner.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}
