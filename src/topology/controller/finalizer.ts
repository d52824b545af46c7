// The finalizer `deletion.finalizers.<plural>.rabbitmq.com`, upstream's name, so an object moves
// between upstream's operator and this controller without being stuck. Added and removed by a merge
// patch of the whole list with the resourceVersion as a precondition: others' finalizers survive.
import { TransientError } from "../../runtime/errors.ts";
import type { KindRef, ObjectMeta } from "../../api/index.ts";
import type { ControllerDeps } from "./deps.ts";
import { isKubeStatus, patchMetadata } from "./kube.ts";

export function finalizerName(kind: KindRef): string {
  return `deletion.finalizers.${kind.plural}.rabbitmq.com`;
}

export function hasFinalizer(kind: KindRef, metadata: ObjectMeta): boolean {
  return (metadata.finalizers ?? []).includes(finalizerName(kind));
}

/** Patches `metadata` (with `fields`) and returns the new resourceVersion; a 409 asks for a retry. */
export async function patchObjectMetadata(
  deps: ControllerDeps,
  kind: KindRef,
  metadata: ObjectMeta,
  fields: Record<string, unknown>,
): Promise<string | undefined> {
  try {
    const updated = (await patchMetadata(deps, kind, metadata.namespace ?? "", metadata.name ?? "", {
      ...fields,
      resourceVersion: metadata.resourceVersion,
    })) as { metadata?: { resourceVersion?: string } } | undefined;
    return updated?.metadata?.resourceVersion;
  } catch (error) {
    if (isKubeStatus(error, 409)) {
      throw new TransientError(`${kind.kind} ${metadata.name} changed while it was updated`, {
        cause: error,
        retryAfterMs: 500,
      });
    }
    throw error;
  }
}

/** Adds the finalizer when missing; updates `metadata` in place (finalizers, resourceVersion). */
export async function addFinalizer(deps: ControllerDeps, kind: KindRef, metadata: ObjectMeta): Promise<void> {
  if (hasFinalizer(kind, metadata)) return;
  const finalizers = [...(metadata.finalizers ?? []), finalizerName(kind)];
  const version = await patchObjectMetadata(deps, kind, metadata, { finalizers });
  metadata.finalizers = finalizers;
  metadata.resourceVersion = version ?? metadata.resourceVersion;
}

/** Removes the finalizer, leaving every other one; an object already gone is fine. */
export async function removeFinalizer(
  deps: ControllerDeps,
  kind: KindRef,
  metadata: ObjectMeta,
): Promise<void> {
  if (!hasFinalizer(kind, metadata)) return;
  const finalizers = (metadata.finalizers ?? []).filter((f) => f !== finalizerName(kind));
  try {
    // An empty list is sent as such: a merge patch with null would also do, but [] reads plainer.
    await patchObjectMetadata(deps, kind, metadata, { finalizers });
  } catch (error) {
    if (isKubeStatus(error, 404)) return;
    throw error;
  }
  metadata.finalizers = finalizers;
}
