// What this process found or confirmed at a path a moment ago. The passes of one order in a rotation come
// seconds apart, and each read its backup before it went on; now a pass whose data this process saw stored
// within `trustMs` goes on without the read, and one whose data differs from what was seen writes it
// without reading first. A drift check comes at least the drift resync's shortest wait after the pass that
// scheduled it, so with a trust below that wait it reads unless another pass did meanwhile. Only a digest
// of the data is kept, never the data; a write, a purge or a failed call forgets the path.
import { createHash } from "node:crypto";
import type { Clock } from "../runtime/base/clock.ts";
import { byCodeUnits } from "../runtime/base/code-units.ts";
import type { CredentialStore, StoredData } from "./store.ts";

interface Seen {
  digest: string;
  version: number;
  until: number;
}

export function recentConfirmations(
  store: CredentialStore,
  clock: Pick<Clock, "monotonic">,
  trustMs: number,
): CredentialStore {
  const seen = new Map<string, Seen>();
  const remember = (path: string, version: number, data: StoredData) =>
    seen.set(path, { digest: digestOf(data), version, until: clock.monotonic() + trustMs });
  const forgetting = async <T>(path: string, call: () => Promise<T>): Promise<T> => {
    seen.delete(path);
    return call();
  };
  return {
    read: (path) =>
      forgetting(path, async () => {
        const found = await store.read(path);
        if (found) remember(path, found.version, found.data);
        return found;
      }),
    write: (path, data) => forgetting(path, () => store.write(path, data)),
    confirm: (path, expected) =>
      forgetting(path, async () => {
        const confirmed = await store.confirm(path, expected);
        if (confirmed.confirmed) remember(path, expected.version, expected.data);
        return confirmed;
      }),
    purge: (path) => forgetting(path, () => store.purge(path)),
    health: () => store.health(),
    recentlySeen(path, data) {
      const entry = seen.get(path);
      if (!entry) return undefined;
      if (clock.monotonic() >= entry.until) {
        seen.delete(path);
        return undefined;
      }
      return { version: entry.version, holds: entry.digest === digestOf(data) };
    },
  };
}

/** The same keys and values give the same digest, whatever their order. */
function digestOf(data: StoredData): string {
  const entries = Object.entries(data).sort(([a], [b]) => byCodeUnits(a, b));
  return createHash("sha256").update(JSON.stringify(entries)).digest("base64");
}
