// What the topology controller needs of Kubernetes beyond the port: the owner reference it sets, and Secrets read as decoded values.
import { secretKind, type KindRef, type ObjectMeta } from "../../api/index.ts";
import type { KubeObject } from "../../runtime/kube-rest.ts";
import { secretValues } from "../resolve/kube-lookup.ts";
import type { ControllerDeps } from "./deps.ts";

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

export interface SecretRead {
  name: string;
  resourceVersion: string;
  labels: Record<string, string>;
  /** Decoded values. */
  values: Record<string, string>;
}

export function secretRead(secret: KubeObject): SecretRead {
  return {
    name: secret.metadata?.name ?? "",
    resourceVersion: secret.metadata?.resourceVersion ?? "",
    labels: secret.metadata?.labels ?? {},
    values: secretValues(secret),
  };
}

export async function readSecret(
  deps: Pick<ControllerDeps, "kube">,
  namespace: string,
  name: string,
): Promise<SecretRead | undefined> {
  const secret = await deps.kube.get(secretKind, { namespace, name });
  return secret && secretRead(secret);
}
