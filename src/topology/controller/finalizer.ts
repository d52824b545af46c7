// The finalizer `deletion.finalizers.<plural>.rabbitmq.com`, upstream's name, so an object moves
// between upstream's operator and this controller without being stuck. The port adds and removes it
// with the resourceVersion as a precondition: others' finalizers survive.
import type { KindRef } from "../../api/index.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import { notFinalizersOnly, specOrMetadataChanged } from "../../runtime/port/predicates.ts";

export function finalizerName(kind: KindRef): string {
  return `deletion.finalizers.${kind.plural}.rabbitmq.com`;
}

/**
 * The update predicate of a kind's own watch: specOrMetadataChanged, less an update that changed
 * nothing but the finalizers and left ours on. Above all that is our own claim: the pass that added
 * the finalizer went on to declare the object, so a second pass for it would find nothing to do.
 */
export function changedBeyondOurFinalizer(
  kind: KindRef,
): (previous: KubeObject, object: KubeObject) => boolean {
  return (previous, object) =>
    specOrMetadataChanged(previous, object) &&
    (notFinalizersOnly(previous, object) ||
      !(object.metadata?.finalizers ?? []).includes(finalizerName(kind)));
}
