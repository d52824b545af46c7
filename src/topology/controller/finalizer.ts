// The finalizer `deletion.finalizers.<plural>.rabbitmq.com`, upstream's name, so an object moves
// between upstream's operator and this controller without being stuck. The port adds and removes it
// with the resourceVersion as a precondition: others' finalizers survive.
import type { KindRef, ObjectMeta } from "../../api/index.ts";

export function finalizerName(kind: KindRef): string {
  return `deletion.finalizers.${kind.plural}.rabbitmq.com`;
}

export function hasFinalizer(kind: KindRef, metadata: ObjectMeta): boolean {
  return (metadata.finalizers ?? []).includes(finalizerName(kind));
}
