// Custom objects as the integration tests make, change, read and remove them on the management
// cluster: by kind, namespace and name; a missing object reads as undefined.
import * as k8s from "@kubernetes/client-node";
import type { KindRef } from "../../src/api/index.ts";
import { isApiError, testCluster } from "./kube.ts";

const cluster = testCluster("management");
export const custom = cluster.config.makeApiClient(k8s.CustomObjectsApi);
const mergePatch = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);

export function group(kind: KindRef) {
  return { group: kind.group, version: kind.version, plural: kind.plural };
}

export async function createResource(
  kind: KindRef,
  namespace: string,
  name: string,
  spec: object,
  annotations?: Record<string, string>,
): Promise<void> {
  await custom.createNamespacedCustomObject({
    ...group(kind),
    namespace,
    body: { apiVersion: kind.apiVersion, kind: kind.kind, metadata: { name, namespace, annotations }, spec },
  });
}

export async function patchSpec(kind: KindRef, namespace: string, name: string, spec: object): Promise<void> {
  await custom.patchNamespacedCustomObject({ ...group(kind), namespace, name, body: { spec } }, mergePatch);
}

export async function getResource<T>(kind: KindRef, namespace: string, name: string): Promise<T | undefined> {
  try {
    return (await custom.getNamespacedCustomObject({ ...group(kind), namespace, name })) as T;
  } catch (error) {
    if (isApiError(error, 404)) return undefined;
    throw error;
  }
}

export async function deleteResource(kind: KindRef, namespace: string, name: string): Promise<void> {
  await custom.deleteNamespacedCustomObject({ ...group(kind), namespace, name });
}

/** Removes every object of `kinds` in `namespace` (finalizers first, so nothing outside is touched), then the namespace. */
export async function tearDownObjects(namespace: string, kinds: readonly KindRef[]): Promise<void> {
  for (const kind of kinds) {
    const list = (await custom.listNamespacedCustomObject({ ...group(kind), namespace }).catch(() => ({
      items: [],
    }))) as { items: { metadata: { name: string } }[] };
    for (const item of list.items) {
      const where = { ...group(kind), namespace, name: item.metadata.name };
      await custom
        .patchNamespacedCustomObject({ ...where, body: { metadata: { finalizers: null } } }, mergePatch)
        .catch(() => undefined);
      await custom.deleteNamespacedCustomObject(where).catch(() => undefined);
    }
  }
  await cluster.core.deleteNamespace({ name: namespace }).catch(() => undefined);
}
