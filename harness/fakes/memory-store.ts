// The credential store in memory, for fast whole-pass tests: paths and versions, each path's
// custom_metadata, a health that can be turned off, and a count of calls by kind.
import {
  confirmation,
  type CredentialStore,
  type StoreHealth,
  type StoredMetadata,
  type StoredVersion,
} from "../../src/backup/store.ts";

export class MemoryStore implements CredentialStore {
  readonly paths = new Map<string, StoredVersion>();
  /** Each path's custom_metadata, apart from its versions as KV v2 keeps it. */
  readonly metadata = new Map<string, StoredMetadata>();
  readonly calls = { write: 0, describe: 0, read: 0, confirm: 0, purge: 0, health: 0 };
  healthState: StoreHealth = { ready: true, state: "ready" };
  /** When set, every write (of data or metadata) and purge fails with this error. */
  failure: Error | undefined;

  async write(
    path: string,
    data: Record<string, string>,
  ): Promise<{ version: number; metadata: StoredMetadata }> {
    this.calls.write++;
    if (this.failure) throw this.failure;
    const version = (this.paths.get(path)?.version ?? 0) + 1;
    this.paths.set(path, { version, data: { ...data } });
    return { version, metadata: this.metadata.get(path) ?? {} };
  }

  async describe(path: string, metadata: StoredMetadata): Promise<void> {
    this.calls.describe++;
    if (this.failure) throw this.failure;
    this.metadata.set(path, { ...metadata });
  }

  async read(path: string): Promise<StoredVersion | undefined> {
    this.calls.read++;
    const found = this.paths.get(path);
    return found && { ...found, metadata: this.metadata.get(path) ?? {} };
  }

  async confirm(path: string, expected: StoredVersion) {
    this.calls.confirm++;
    return confirmation(expected, this.paths.get(path));
  }

  async purge(path: string): Promise<void> {
    this.calls.purge++;
    if (this.failure) throw this.failure;
    this.paths.delete(path);
    this.metadata.delete(path);
  }

  async health(): Promise<StoreHealth> {
    this.calls.health++;
    return this.healthState;
  }
}
