// The credential store with its metrics: every call timed, every new version counted as a backup
// write, every failed call (and every health check that finds the store unusable) as a failure.
import type { CredentialStore } from "../backup/store.ts";
import type { DomainMetrics } from "./domain-metrics.ts";

export function instrumentedStore(store: CredentialStore, metrics: DomainMetrics): CredentialStore {
  const timed = async <T>(operation: string, call: () => Promise<T>, failed?: (r: T) => boolean) => {
    const stop = metrics.backendLatency.startTimer({ backend: "openbao", operation });
    try {
      const result = await call();
      if (failed?.(result)) metrics.backupFailures.inc({ operation });
      return result;
    } catch (error) {
      metrics.backupFailures.inc({ operation });
      throw error;
    } finally {
      stop();
    }
  };
  return {
    write: async (path, data) => {
      const written = await timed("write", () => store.write(path, data));
      metrics.backupWrites.inc();
      return written;
    },
    describe: (path, metadata) => timed("describe", () => store.describe(path, metadata)),
    read: (path) => timed("read", () => store.read(path)),
    confirm: (path, expected) => timed("confirm", () => store.confirm(path, expected)),
    purge: (path) => timed("purge", () => store.purge(path)),
    health: () =>
      timed(
        "health",
        () => store.health(),
        (h) => !h.ready,
      ),
  };
}
