import { deepFreeze } from "../base/freeze.ts";
import { matchesSelector, parseSelector } from "../base/selector.ts";
import { apiVersionOf, type Kind, type KubeObject } from "./kube-rest.ts";
import { ObjectIndex, type CacheIndex } from "./object-index.ts";

// An informer's cache: its objects by key, read by namespace, label or a caller's index through indexes
// built on first use and kept exact on every change, so that a read costs what it finds.

export class ObjectStore {
  private readonly objects = new Map<string, KubeObject>();
  private readonly indexes = new Map<string, ObjectIndex>();

  get(key: string): KubeObject | undefined {
    return this.objects.get(key);
  }

  list(): KubeObject[] {
    return [...this.objects.values()];
  }

  values(): IterableIterator<KubeObject> {
    return this.objects.values();
  }

  /** The objects by key, live as a Map's: the one at hand may be removed while this is read. */
  entries(): IterableIterator<[string, KubeObject]> {
    return this.objects.entries();
  }

  /** Keeps `object` under `key`, in place of the object it returns. */
  put(key: string, object: KubeObject): KubeObject | undefined {
    const previous = this.objects.get(key);
    this.objects.set(key, object);
    for (const index of this.indexes.values()) index.put(key, object, previous);
    return previous;
  }

  remove(key: string, object: KubeObject): void {
    this.objects.delete(key);
    for (const index of this.indexes.values()) index.remove(key, object);
  }

  /** The objects of `namespace` that match `labelSelector`, as a filter of the cache would find them. */
  select(namespace: string, labelSelector: string): KubeObject[] {
    // The smallest bucket of an equality term holds every match; without one, the namespace's does.
    const buckets = parseSelector(labelSelector).flatMap((r) =>
      r.op === "equals" ? [this.index(labelIndex(r.key)).get(namespace, r.value)] : [],
    );
    const candidates =
      buckets.length === 0
        ? this.index(namespaceIndex).get(namespace, "")
        : buckets.reduce((a, b) => (b.size < a.size ? b : a));
    const out: KubeObject[] = [];
    for (const object of candidates.values()) {
      if (matchesSelector(labelSelector, object.metadata?.labels)) out.push(object);
    }
    return out;
  }

  /** The objects of `namespace` that `index` files under `value`. */
  byIndex(index: CacheIndex, namespace: string, value: string): KubeObject[] {
    return [...this.index(index).get(namespace, value).values()];
  }

  /** The index by its definition, built from the objects the first time it is asked for. */
  private index(definition: CacheIndex): ObjectIndex {
    let index = this.indexes.get(definition.name);
    if (index) {
      if (index.definition !== definition) throw new Error(`cache index ${definition.name} is defined twice`);
      return index;
    }
    index = new ObjectIndex(definition);
    for (const [key, object] of this.objects) index.put(key, object);
    this.indexes.set(definition.name, index);
    return index;
  }
}

const namespaceIndex: CacheIndex = { name: "runtime/namespace", values: () => [""] };

const labelIndexes = new Map<string, CacheIndex>();

/** The index of one label key: an object carrying it is filed under its value. */
function labelIndex(key: string): CacheIndex {
  let index = labelIndexes.get(key);
  if (!index) {
    index = {
      name: `runtime/label ${key}`,
      values: (object) => {
        const value = object.metadata?.labels?.[key];
        return typeof value === "string" ? [value] : [];
      },
    };
    labelIndexes.set(key, index);
  }
  return index;
}

/**
 * The object as the cache keeps it: with its kind (a list's items lack it), without managedFields,
 * which no reconciler reads and which are often the largest part of a small object, and deeply frozen.
 * Every controller and plugin reads the same object: frozen, a reader that changed it would throw (an
 * ES module is strict) instead of changing what the others see. Freezing once costs less than a copy
 * per read.
 */
export function cacheable(
  object: KubeObject,
  kind: Kind,
  transform: (object: KubeObject) => KubeObject = (o) => o,
): KubeObject {
  // A copy without the key rather than a delete: V8 keeps an object whose property was deleted as a
  // hash table, several times the size of the same object in its fast form, for as long as it lives.
  const { managedFields, ...metadata } = object.metadata ?? {};
  return deepFreeze(transform({ ...object, apiVersion: apiVersionOf(kind), kind: kind.kind, metadata }));
}
