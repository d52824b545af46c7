import type { KubeObject } from "./kube-rest.ts";

/**
 * An update predicate for a controller's own kind: a change of generation (the spec), of the labels,
 * annotations or finalizers, or a deletion. A status write, the controller's own above all, costs no
 * pass. Objects without a generation (core kinds like Secrets) always pass.
 */
export function specOrMetadataChanged(previous: KubeObject, object: KubeObject): boolean {
  const a = previous.metadata ?? {};
  const b = object.metadata ?? {};
  if (a.generation === undefined && b.generation === undefined) return true;
  const same = (x: unknown, y: unknown) => JSON.stringify(x ?? null) === JSON.stringify(y ?? null);
  return !(
    a.generation === b.generation &&
    same(a.labels, b.labels) &&
    same(a.annotations, b.annotations) &&
    same(a.finalizers, b.finalizers) &&
    same(a.deletionTimestamp, b.deletionTimestamp)
  );
}
