// The Kubernetes port (kube.ts) on one cluster over its API server. Reads come from the informer caches
// where one holds the kind (a live read where the cache cannot answer or freshness matters). Every call
// goes through KubeRest, so every request is counted in rest_client_requests_total, and every write first
// asks the write fence (write-fence.ts) whether this process still leads.
import { TransientError } from "../base/errors.ts";
import { selectorCovers } from "../base/selector.ts";
import { openFence, type WriteFence } from "../base/write-fence.ts";
import {
  FIELD_MANAGER,
  isConflict,
  isNotServed,
  sameStatus,
  staleWriteError,
  type Kube,
  type KubeCache,
  type ObjectRef,
} from "./kube.ts";
import {
  apiPath,
  apiVersionOf,
  isApiStatus,
  type Kind,
  type KubeList,
  type KubeObject,
  type KubeRest,
  type RequestOptions,
} from "./kube-rest.ts";
import type { CacheIndex } from "./object-index.ts";
import { isPartial } from "./secret-bound.ts";

/** The port on one cluster: KubeRest for the API server, `cache` for reads where it can answer. */
export class RestKube implements Kube {
  private readonly rest: KubeRest;
  private readonly cache: KubeCache | undefined;
  private readonly signal: AbortSignal | undefined;
  private readonly fence: WriteFence;

  constructor(
    rest: KubeRest,
    options: {
      cache?: KubeCache | undefined;
      signal?: AbortSignal | undefined;
      /** Asked right before each write (every request but a GET); default: none. */
      fence?: WriteFence | undefined;
    } = {},
  ) {
    this.rest = rest;
    this.cache = options.cache;
    this.signal = options.signal;
    this.fence = options.fence ?? openFence;
  }

  /** The same port, with every request bound to `signal` (the reconcile's deadline). */
  withSignal(signal: AbortSignal): RestKube {
    return new RestKube(this.rest, { cache: this.cache, signal, fence: this.fence });
  }

  async get(kind: Kind, ref: ObjectRef, options: { live?: boolean } = {}): Promise<KubeObject | undefined> {
    if (!options.live) {
      const caches = this.cache?.caches(kind, ref.namespace) ?? [];
      const hits = caches.flatMap((cached): KubeObject[] => {
        const hit = cached.get(ref.namespace, ref.name);
        return hit ? [hit] : [];
      });
      // Two caches may hold the object (two label selectors); each sees an event at its own moment.
      const hit = hits.reduce<KubeObject | undefined>((a, b) => (a && !newer(b, a) ? a : b), undefined);
      // A partial object (secret-bound.ts) is read whole from the API server.
      if (hit && !isPartial(hit)) return hit;
      // A cache without a selector holds every object of its scope: a miss is an absence.
      if (!hit && caches.some((c) => c.labelSelector === "")) return undefined;
    }
    try {
      const object = await this.request<KubeObject>("GET", apiPath(kind, ref.namespace, ref.name));
      return { ...object, apiVersion: apiVersionOf(kind), kind: kind.kind };
    } catch (error) {
      if (isApiStatus(error, 404) && !isNotServed(error)) return undefined;
      throw error;
    }
  }

  async list(kind: Kind, namespace: string, labelSelector: string): Promise<KubeObject[]> {
    const cached = this.cache
      ?.caches(kind, namespace)
      .find((c) => selectorCovers(c.labelSelector, labelSelector));
    if (cached) return this.whole(kind, cached.list(namespace, labelSelector));
    const limit = namespace === "" ? this.cache?.limitOf?.(kind) : undefined;
    if (limit) return (await Promise.all(limit.map((ns) => this.list(kind, ns, labelSelector)))).flat();
    const list = await this.request<KubeList>("GET", apiPath(kind, namespace), {
      query: labelSelector ? { labelSelector } : {},
    });
    return list.items.map((item) => ({ ...item, apiVersion: apiVersionOf(kind), kind: kind.kind }));
  }

  async listByIndex(kind: Kind, namespace: string, index: CacheIndex, value: string): Promise<KubeObject[]> {
    const cached = this.cache?.caches(kind, namespace).find((c) => c.labelSelector === "");
    if (cached) return this.whole(kind, cached.byIndex(index, namespace, value));
    return (await this.list(kind, namespace, "")).filter((o) => index.values(o).includes(value));
  }

  /** Cached objects as they are, each partial one read from the API server (gone since: left out). */
  private async whole(kind: Kind, objects: KubeObject[]): Promise<KubeObject[]> {
    if (!objects.some(isPartial)) return objects;
    const read = await Promise.all(
      objects.map((o) =>
        isPartial(o)
          ? this.get(
              kind,
              { namespace: o.metadata?.namespace ?? "", name: o.metadata?.name ?? "" },
              { live: true },
            )
          : o,
      ),
    );
    return read.filter((o): o is KubeObject => o !== undefined);
  }

  apply(kind: Kind, object: KubeObject): Promise<KubeObject> {
    const { name, namespace } = object.metadata ?? {};
    if (!name) throw new Error(`cannot apply a ${kind.kind} without a name`);
    return this.request<KubeObject>("PATCH", apiPath(kind, namespace, name), {
      query: { fieldManager: FIELD_MANAGER, force: true },
      // JSON is YAML, so the apply content type takes the JSON body as it is.
      contentType: "application/apply-patch+yaml",
      body: { ...object, apiVersion: apiVersionOf(kind), kind: kind.kind },
    });
  }

  create(kind: Kind, object: KubeObject): Promise<KubeObject> {
    return this.request<KubeObject>("POST", apiPath(kind, object.metadata?.namespace), {
      query: { fieldManager: FIELD_MANAGER },
      body: { ...object, apiVersion: apiVersionOf(kind), kind: kind.kind },
    });
  }

  async patchStatus(kind: Kind, object: KubeObject, status: Record<string, unknown>): Promise<boolean> {
    const before = (object.status ?? {}) as Record<string, unknown>;
    if (sameStatus(before, status)) return false;
    const { name, namespace, resourceVersion } = object.metadata ?? {};
    await this.conflictIsTransient("writing the status", () =>
      this.request("PATCH", apiPath(kind, namespace, name, "status"), {
        query: { fieldManager: FIELD_MANAGER },
        contentType: "application/merge-patch+json",
        body: { metadata: { resourceVersion }, status: statusMergePatch(before, status) },
        discard: true,
      }),
    );
    return true;
  }

  async ensureFinalizer(kind: Kind, object: KubeObject, finalizer: string): Promise<boolean> {
    const finalizers = object.metadata?.finalizers ?? [];
    if (finalizers.includes(finalizer)) return false;
    await this.patchFinalizers(kind, object, [...finalizers, finalizer]);
    return true;
  }

  async removeFinalizer(kind: Kind, object: KubeObject, finalizer: string): Promise<void> {
    const finalizers = object.metadata?.finalizers ?? [];
    if (!finalizers.includes(finalizer)) return;
    try {
      await this.patchFinalizers(
        kind,
        object,
        finalizers.filter((f) => f !== finalizer),
      );
    } catch (error) {
      if (!isApiStatus(findCause(error), 404)) throw error;
    }
  }

  async delete(kind: Kind, ref: ObjectRef): Promise<void> {
    try {
      await this.request("DELETE", apiPath(kind, ref.namespace, ref.name), { discard: true });
    } catch (error) {
      if (!isApiStatus(error, 404) || isNotServed(error)) throw error;
    }
  }

  /**
   * A merge patch that carries the resourceVersion it read: a concurrent change (to the finalizers,
   * say) fails with a conflict (retried once the watch brings the new object) instead of being
   * overwritten.
   */
  patchMetadata(kind: Kind, object: KubeObject, metadata: Record<string, unknown>): Promise<KubeObject> {
    return this.mergeMetadata(kind, object, metadata, false);
  }

  private async patchFinalizers(kind: Kind, object: KubeObject, finalizers: string[]): Promise<void> {
    await this.mergeMetadata(kind, object, { finalizers }, true);
  }

  private mergeMetadata(
    kind: Kind,
    object: KubeObject,
    metadata: Record<string, unknown>,
    discard: boolean,
  ): Promise<KubeObject> {
    const { name, namespace, resourceVersion } = object.metadata ?? {};
    return this.conflictIsTransient("writing the metadata", () =>
      this.request<KubeObject>("PATCH", apiPath(kind, namespace, name), {
        query: { fieldManager: FIELD_MANAGER },
        contentType: "application/merge-patch+json",
        body: { metadata: { ...metadata, resourceVersion } },
        discard,
      }),
    );
  }

  private async conflictIsTransient<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (!isConflict(error)) throw error;
      throw staleWriteError(what, error);
    }
  }

  private async request<T>(
    method: string,
    path: string,
    options: Omit<RequestOptions, "signal"> = {},
  ): Promise<T> {
    // The one place every write of the port passes: apply, create, status, finalizers, metadata, delete.
    if (method !== "GET") this.fence.check(`${method} ${path}`);
    return this.rest.request<T>(method, path, {
      ...options,
      ...(this.signal ? { signal: this.signal } : {}),
    });
  }
}

/**
 * Whether `a` is a later version of the object than `b`. The API server's resourceVersions are etcd
 * revisions (decimal integers, growing); anything else is not compared, and `b` is kept.
 */
function newer(a: KubeObject, b: KubeObject): boolean {
  const [x, y] = [a.metadata?.resourceVersion, b.metadata?.resourceVersion];
  if (!x || !y || !/^[0-9]+$/.test(x) || !/^[0-9]+$/.test(y)) return false;
  return BigInt(x) > BigInt(y);
}

function findCause(error: unknown): unknown {
  return error instanceof TransientError ? error.cause : error;
}

/** A merge patch that makes the status `after`: every field it has, and null for each it dropped. */
export function statusMergePatch(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(before)) if (after[key] === undefined) patch[key] = null;
  for (const [key, value] of Object.entries(after)) if (value !== undefined) patch[key] = value;
  return patch;
}
