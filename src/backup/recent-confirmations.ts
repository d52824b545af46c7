// What this process found or confirmed at a path a moment ago. The passes of one order in a rotation come
// seconds apart, and each read its backup before it went on; now a pass whose data this process saw stored
// within `trustMs` goes on without the read, and one whose data differs from what was seen writes it
// without reading first. A drift check comes at least the drift resync's shortest wait after the pass that
// scheduled it, so with a trust below that wait it reads unless another pass did meanwhile. Only a digest
// of the data is kept, never the data; a write, a purge or a failed call forgets the path. The path's
// custom_metadata is remembered the same way (a digest), so a pass that finds it right writes none.
import { createHash } from "node:crypto";
import type { Clock } from "../runtime/base/clock.ts";
import { byCodeUnits } from "../runtime/base/code-units.ts";
import type { CredentialStore, StoredData, StoredMetadata } from "./store.ts";

interface Seen {
  digest: string;
  version: number;
  /** The custom_metadata's digest; undefined when it is not known. */
  described: string | undefined;
  until: number;
}

export function recentConfirmations(
  store: CredentialStore,
  clock: Pick<Clock, "monotonic">,
  trustMs: number,
): CredentialStore {
  const seen = new Map<string, Seen>();
  const remember = (path: string, version: number, data: StoredData, metadata?: StoredMetadata) =>
    seen.set(path, {
      digest: digestOf(data),
      version,
      described: metadata && digestOf(metadata),
      until: clock.monotonic() + trustMs,
    });
  const forgetting = async <T>(path: string, call: () => Promise<T>): Promise<T> => {
    seen.delete(path);
    return call();
  };
  return {
    read: (path) =>
      forgetting(path, async () => {
        const found = await store.read(path);
        if (found) remember(path, found.version, found.data, found.metadata ?? {});
        return found;
      }),
    write: (path, data) => forgetting(path, () => store.write(path, data)),
    async describe(path, metadata) {
      try {
        await store.describe(path, metadata);
      } catch (err) {
        seen.delete(path);
        throw err;
      }
      const entry = seen.get(path);
      if (entry) entry.described = digestOf(metadata);
    },
    confirm: (path, expected) =>
      forgetting(path, async () => {
        const confirmed = await store.confirm(path, expected);
        if (confirmed.confirmed) remember(path, expected.version, expected.data, expected.metadata);
        return confirmed;
      }),
    purge: (path) => forgetting(path, () => store.purge(path)),
    health: () => store.health(),
    recentlySeen(path, data, metadata) {
      const entry = seen.get(path);
      if (!entry) return undefined;
      if (clock.monotonic() >= entry.until) {
        seen.delete(path);
        return undefined;
      }
      return {
        version: entry.version,
        holds: entry.digest === digestOf(data),
        described: entry.described === digestOf(metadata),
      };
    },
  };
}

/** The same keys and values give the same digest, whatever their order. */
function digestOf(data: StoredData | StoredMetadata): string {
  const entries = Object.entries(data).sort(([a], [b]) => byCodeUnits(a, b));
  return createHash("sha256").update(JSON.stringify(entries)).digest("base64");
}
