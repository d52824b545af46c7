import type { KubeObject } from "./kube-rest.ts";

// Indexes of an informer's cache: the objects of each namespace under each value a function gives
// them, so that a lookup costs what it finds, not the size of the cache. Buckets hold references to
// the cached objects, never copies.

/**
 * A way to find the cached objects of a kind: `values` says under which values an object is found
 * within its namespace. It must depend on the object alone. One name, one definition: the cache
 * keeps one index per name, and a second definition under a name already in use is refused.
 */
export interface CacheIndex {
  name: string;
  values(object: KubeObject): string[];
}

export class ObjectIndex {
  readonly definition: CacheIndex;
  private readonly buckets = new Map<string, Map<string, KubeObject>>();

  constructor(definition: CacheIndex) {
    this.definition = definition;
  }

  /** Files `object` (cached under `key`), which replaces `previous` when given. */
  put(key: string, object: KubeObject, previous?: KubeObject): void {
    const now = this.slots(object);
    if (previous) for (const slot of this.slots(previous)) if (!now.has(slot)) this.unfile(slot, key);
    // An object that stays in a bucket keeps its place there.
    for (const slot of now) this.bucket(slot).set(key, object);
  }

  remove(key: string, object: KubeObject): void {
    for (const slot of this.slots(object)) this.unfile(slot, key);
  }

  /** The objects of `namespace` filed under `value`; the live bucket, not a copy. */
  get(namespace: string, value: string): ReadonlyMap<string, KubeObject> {
    return this.buckets.get(slotOf(namespace, value)) ?? empty;
  }

  private slots(object: KubeObject): Set<string> {
    const namespace = object.metadata?.namespace ?? "";
    return new Set(this.definition.values(object).map((value) => slotOf(namespace, value)));
  }

  private bucket(slot: string): Map<string, KubeObject> {
    let bucket = this.buckets.get(slot);
    if (!bucket) this.buckets.set(slot, (bucket = new Map()));
    return bucket;
  }

  private unfile(slot: string, key: string): void {
    const bucket = this.buckets.get(slot);
    if (!bucket) return;
    bucket.delete(key);
    if (bucket.size === 0) this.buckets.delete(slot);
  }
}

const empty: ReadonlyMap<string, KubeObject> = new Map();

// A namespace never holds "/", so the first one splits the slot unambiguously.
const slotOf = (namespace: string, value: string) => `${namespace}/${value}`;
