// What the Secret caches keep of a Secret. A Secret carrying a watched label is cached in any
// namespace, also one a tenant writes, in each cache whose selector takes it: whole and once per cache,
// a tenant's Secrets of up to 1 MiB each would fill the operator's memory. Beyond `secretCacheBytes` of
// data and annotations a cache keeps the Secret without them, marked partial, and the port reads it
// from the API server (kube.ts); no Secret the operator reads comes near the bound (credentials, a URL,
// a CA). The caches of one cluster share one copy of each version of a Secret.
import type { KubeObject } from "./kube-rest.ts";

/** The data and annotations a cached Secret may hold (keys and values, as the API sends them). */
export const secretCacheBytes = 16 * 1024;

const partial = new WeakSet<object>();

/** Whether the cache holds only part of the object: what it lacks is on the API server. */
export function isPartial(object: KubeObject): boolean {
  return partial.has(object);
}

/** The Secret as a cache keeps it: whole within the bound, else without its data and annotations. */
export function boundSecret(secret: KubeObject): KubeObject {
  if (bulk(secret) <= secretCacheBytes) return secret;
  const { data, ...rest } = secret;
  const { annotations, ...metadata } = secret.metadata ?? {};
  const kept: KubeObject = { ...rest, metadata };
  partial.add(kept);
  return kept;
}

/**
 * The transform of one cluster's Secret caches: each Secret bounded, and one copy of each version
 * (uid and resourceVersion) for every cache that selects it. The caches freeze what they keep, so no
 * reader can tell the copies are one.
 */
export function sharedSecrets(): (secret: KubeObject) => KubeObject {
  const kept = new Map<string, WeakRef<KubeObject>>();
  const collected = new FinalizationRegistry<string>((id) => {
    if (!kept.get(id)?.deref()) kept.delete(id);
  });
  return (secret) => {
    const { uid, resourceVersion } = secret.metadata ?? {};
    if (!uid || !resourceVersion) return boundSecret(secret);
    const id = `${uid}/${resourceVersion}`;
    const known = kept.get(id)?.deref();
    if (known) return known;
    const bounded = boundSecret(secret);
    kept.set(id, new WeakRef(bounded));
    collected.register(bounded, id);
    return bounded;
  };
}

function bulk(secret: KubeObject): number {
  let bytes = 0;
  for (const map of [secret["data"], secret.metadata?.annotations]) {
    if (typeof map !== "object" || map === null) continue;
    for (const [key, value] of Object.entries(map)) {
      bytes += key.length + (typeof value === "string" ? value.length : 0);
    }
  }
  return bytes;
}
