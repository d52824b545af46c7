// One health check of the store for many passes: the passes of a busy moment (a cold start, a
// rotation storm) each open with the store's health, so callers at the same time share one request,
// and a "ready" answer stands for a short while. Any other answer is never reused: a store that was
// down is asked again by the next pass, and a failing write or read still says so on its own.
import type { Clock } from "../runtime/base/clock.ts";
import type { CredentialStore, StoreHealth } from "./store.ts";

export function sharedHealth(
  store: CredentialStore,
  clock: Pick<Clock, "monotonic">,
  readyForMs = 1_000,
): CredentialStore {
  let inFlight: Promise<StoreHealth> | undefined;
  let readyUntil = -Infinity;
  const ask = async (): Promise<StoreHealth> => {
    const health = await store.health();
    if (health.ready) readyUntil = clock.monotonic() + readyForMs;
    return health;
  };
  return {
    write: (path, data) => store.write(path, data),
    describe: (path, metadata) => store.describe(path, metadata),
    read: (path) => store.read(path),
    confirm: (path, expected) => store.confirm(path, expected),
    purge: (path) => store.purge(path),
    health() {
      if (clock.monotonic() < readyUntil) return Promise.resolve({ ready: true, state: "ready" });
      inFlight ??= ask().finally(() => (inFlight = undefined));
      return inFlight;
    },
  };
}
