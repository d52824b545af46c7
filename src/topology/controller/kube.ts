// Reads and writes of topology objects on the management cluster, through client-node directly:
// JSON merge patches for metadata (with the resourceVersion as a precondition) and for /status.
import * as k8s from "@kubernetes/client-node";
import type { KindRef, ObjectMeta } from "../../api/index.ts";
import type { ControllerDeps } from "./deps.ts";

const mergePatch = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);

export function isKubeStatus(error: unknown, code: number): boolean {
  return error instanceof k8s.ApiException && error.code === code;
}

function address(kind: KindRef, namespace: string, name: string) {
  return { group: kind.group, version: kind.version, plural: kind.plural, namespace, name };
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

/** The object as the API server holds it, or undefined on a 404. */
export async function readObject(
  deps: ControllerDeps,
  kind: KindRef,
  namespace: string,
  name: string,
): Promise<unknown> {
  try {
    return (await deps.custom.getNamespacedCustomObject(address(kind, namespace, name))) as unknown;
  } catch (error) {
    if (isKubeStatus(error, 404)) return undefined;
    throw error;
  }
}

/**
 * Merge-patches metadata; `resourceVersion` makes it fail with 409 when the object changed since it
 * was read, so lists such as finalizers are never written over someone else's change.
 */
export async function patchMetadata(
  deps: ControllerDeps,
  kind: KindRef,
  namespace: string,
  name: string,
  metadata: Record<string, unknown> & { resourceVersion: string | undefined },
): Promise<unknown> {
  return (await deps.custom.patchNamespacedCustomObject(
    { ...address(kind, namespace, name), body: { metadata } },
    mergePatch,
  )) as unknown;
}

/** Merge-patches the status subresource with `status`. */
export async function patchStatus(
  deps: ControllerDeps,
  kind: KindRef,
  namespace: string,
  name: string,
  status: Record<string, unknown>,
): Promise<void> {
  await deps.custom.patchNamespacedCustomObjectStatus(
    { ...address(kind, namespace, name), body: { status } },
    mergePatch,
  );
}

export interface SecretRead {
  name: string;
  resourceVersion: string;
  labels: Record<string, string>;
  ownerReferences: k8s.V1OwnerReference[];
  /** Decoded values. */
  values: Record<string, string>;
}

export async function readSecret(
  deps: ControllerDeps,
  namespace: string,
  name: string,
): Promise<SecretRead | undefined> {
  let secret: k8s.V1Secret;
  try {
    secret = await deps.core.readNamespacedSecret({ namespace, name });
  } catch (error) {
    if (isKubeStatus(error, 404)) return undefined;
    throw error;
  }
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) {
    values[key] = Buffer.from(value, "base64").toString("utf8");
  }
  return {
    name,
    resourceVersion: secret.metadata?.resourceVersion ?? "",
    labels: secret.metadata?.labels ?? {},
    ownerReferences: secret.metadata?.ownerReferences ?? [],
    values,
  };
}
