// A stable fingerprint of a desired state, so a controller can skip requests that would change
// nothing: the same state gives the same hash whatever the order of object keys.
import { createHash, createHmac, type KeyObject } from "node:crypto";

/** JSON with object keys sorted at every depth; `undefined` members are left out, as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(v).sort()) sorted[key] = (v as Record<string, unknown>)[key];
    return sorted;
  });
}

/**
 * sha256 (hex) of the canonical JSON of `state`. A state holding a password (a user's) must be
 * hashed with a `key` (HMAC-SHA256): a bare hash of a password is open to guessing if it is ever
 * stored or logged, a keyed one is not. A key made once per process suits an in-memory cache.
 */
export function desiredStateHash(state: unknown, key?: KeyObject | Uint8Array): string {
  const text = canonicalJson(state) ?? "undefined";
  const h = key ? createHmac("sha256", key) : createHash("sha256");
  return h.update(text, "utf8").digest("hex");
}
