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

/**
 * An update predicate for objects another controller also acts on: drops an update that changed
 * nothing but the finalizers (a topology controller claiming or releasing its object), so that a
 * watcher pays no pass for it. A deletion still passes: it sets deletionTimestamp.
 */
export function notFinalizersOnly(previous: KubeObject, object: KubeObject): boolean {
  const rest = (o: KubeObject) => {
    const metadata = { ...o.metadata };
    delete metadata.finalizers;
    delete metadata.resourceVersion;
    delete metadata.managedFields;
    return JSON.stringify({ ...o, metadata });
  };
  return rest(previous) !== rest(object);
}
