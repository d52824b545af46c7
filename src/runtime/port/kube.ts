// The one Kubernetes port every reconciler receives in place of a KubeConfig: reads that may come from
// the informer caches, writes by server-side apply under one field manager, the status written only
// when it changed, a 404 read as "absent", and a write from a stale read reported as transient.
// rest-kube.ts implements it over the API server; harness/fakes/fake-kube.ts in memory.
import { byCodeUnits } from "../base/code-units.ts";
import { deepEqual } from "../base/conditions.ts";
import { TransientError } from "../base/errors.ts";
import { KubeApiError, isApiStatus, type Kind, type KubeObject } from "./kube-rest.ts";
import type { CacheIndex } from "./object-index.ts";

export const FIELD_MANAGER = "vhost-broker";

export interface ObjectRef {
  namespace: string;
  name: string;
}

export interface Kube {
  /** The object, or undefined when it does not exist. Throws a not-served error when the kind is not served. */
  get(kind: Kind, ref: ObjectRef, options?: { live?: boolean }): Promise<KubeObject | undefined>;
  /** The objects of `kind` in `namespace` ("" for every namespace) that match `labelSelector`. */
  list(kind: Kind, namespace: string, labelSelector: string): Promise<KubeObject[]>;
  /**
   * The objects of `kind` in `namespace` that `index` files under `value`: from a cache that holds the
   * kind's every object, through the index, at the cost of what it finds; else a live list, filtered.
   */
  listByIndex(kind: Kind, namespace: string, index: CacheIndex, value: string): Promise<KubeObject[]>;
  /** Server-side apply of the fields in `object`, forced, under the field manager `vhost-broker`. */
  apply(kind: Kind, object: KubeObject): Promise<KubeObject>;
  /** Creates the object; a 409 (it exists) is thrown. */
  create(kind: Kind, object: KubeObject): Promise<KubeObject>;
  /**
   * Makes the status subresource hold `status` when it differs from `object.status`; true when written.
   * The write carries the object's resourceVersion, so a status computed from a stale read conflicts.
   */
  patchStatus(kind: Kind, object: KubeObject, status: Record<string, unknown>): Promise<boolean>;
  /** Adds `finalizer`; true when it was missing (the update brings the next pass). */
  ensureFinalizer(kind: Kind, object: KubeObject, finalizer: string): Promise<boolean>;
  /** Removes `finalizer`; an object already gone is done. */
  removeFinalizer(kind: Kind, object: KubeObject, finalizer: string): Promise<void>;
  /**
   * Merge-patches `metadata` fields (owner references, say) into the object, carrying its
   * resourceVersion; returns the updated object. Not apply: a partial apply under the shared field
   * manager would drop the fields another of our controllers applied.
   */
  patchMetadata(kind: Kind, object: KubeObject, metadata: Record<string, unknown>): Promise<KubeObject>;
  /** Deletes the object; one already gone is done. */
  delete(kind: Kind, ref: ObjectRef, options?: DeleteOptions): Promise<void>;
}

export interface DeleteOptions {
  /**
   * The caller waits for nothing the removal brings: a controller's recording port (own-writes.ts) drops
   * the watch event of the object's disappearance instead of waking the controller for it.
   */
  quiet?: boolean;
}

/** Where the port looks before it asks the API server; the caches of an engaged cluster implement it. */
export interface KubeCache {
  /** The synced caches of `kind` that hold `namespace` (every namespace's cache among them). */
  caches(kind: Kind, namespace: string): CachedObjects[];
  /**
   * The namespaces `kind` is limited to on this cluster (watch-scope.ts); undefined = none. A read of
   * every namespace the caches cannot answer asks for each of them, never for all.
   */
  limitOf?(kind: Kind): readonly string[] | undefined;
}

export interface CachedObjects {
  get(namespace: string, name: string): KubeObject | undefined;
  /** The cached objects of `namespace` that match `labelSelector`. */
  list(namespace: string, labelSelector: string): KubeObject[];
  /** The cached objects of `namespace` that `index` files under `value`. */
  byIndex(index: CacheIndex, namespace: string, value: string): KubeObject[];
  /** The selector of the cache: an object it lacks may still exist when this is not empty. */
  labelSelector: string;
}

/**
 * A 404 with a Status body is a missing object; a 404 without one ("404 page not found") is a
 * resource the API server does not serve at all.
 */
export function isNotServed(error: unknown): boolean {
  return error instanceof KubeApiError && error.code === 404 && error.reason !== "NotFound";
}

export const isConflict = (error: unknown): boolean => isApiStatus(error, 409);

const CONFLICT_RETRY_MS = 1_000;

/** A write from a stale read, as the port reports it: transient, with the API server's 409 as its cause. */
export function staleWriteError(what: string, conflict: unknown): TransientError {
  // The watch brings the newer object at once; the retry is only the floor if it does not.
  return new TransientError(`${what} conflicted with a newer version of the object`, {
    cause: conflict,
    retryAfterMs: CONFLICT_RETRY_MS,
  });
}

/** Whether two statuses say the same: key order, undefined fields and condition order do not count. */
export function sameStatus(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return deepEqual(normalised(a), normalised(b));
}

function normalised(status: Record<string, unknown>): Record<string, unknown> {
  const conditions = status["conditions"];
  if (!Array.isArray(conditions)) return status;
  const sorted = [...(conditions as { type?: string }[])].sort((x, y) =>
    byCodeUnits(x.type ?? "", y.type ?? ""),
  );
  return { ...status, conditions: sorted };
}
