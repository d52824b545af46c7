// The project's own interface to the credential backup, independent of the OpenBao client behind it.
// The orders use only this file; src/backup/openbao.ts implements it.

/** The stored keys (for an order: transport_url, host, port, username, password and vhost). */
export type StoredData = Record<string, string>;

/**
 * The path's KV v2 custom_metadata: names, never a credential (./owner.ts). It belongs to the path, not
 * to a version.
 */
export type StoredMetadata = Record<string, string>;

export interface StoredVersion {
  version: number;
  data: StoredData;
  /** The path's custom_metadata as a read found it ({} for none); not compared by a confirmation. */
  metadata?: StoredMetadata | undefined;
}

export type Confirmation =
  { confirmed: true } | { confirmed: false; reason: "missing" | "version-mismatch" | "content-mismatch" };

/** Whether the store can be used, and if not, why: the order reports SecretStoreNotReady with the message. */
export type StoreHealth =
  | { ready: true; state: "ready" }
  | { ready: false; state: "unreachable" | "sealed" | "auth-refused" | "failing"; message: string };

export interface CredentialStore {
  /** Writes the keys at `path` as a new version and returns that version and the path's custom_metadata. */
  write(path: string, data: StoredData): Promise<{ version: number; metadata?: StoredMetadata | undefined }>;
  /** Sets the path's custom_metadata to `metadata`, in place of what it held. */
  describe(path: string, metadata: StoredMetadata): Promise<void>;
  /** The current version at `path`, or undefined when there is none (never written, or purged). */
  read(path: string): Promise<StoredVersion | undefined>;
  /** Reads `path` back and says whether it holds exactly `expected` (version and content). */
  confirm(path: string, expected: StoredVersion): Promise<Confirmation>;
  /** Removes `path` with every version and its metadata. Purging a path that does not exist is done. */
  purge(path: string): Promise<void>;
  health(): Promise<StoreHealth>;
  /**
   * What this process saw at `path` a moment ago: the version, whether it held exactly `data`, and
   * whether its custom_metadata was `metadata`; so that a caller may go on without reading it again.
   * Undefined when it does not know, or for a store that does not remember.
   */
  recentlySeen?(
    path: string,
    data: StoredData,
    metadata: StoredMetadata,
  ): { version: number; holds: boolean; described: boolean } | undefined;
}

/**
 * What went wrong talking to the store. `unreachable`, `sealed` and `auth-refused` mean the store cannot
 * be used at all (SecretStoreNotReady); the others concern one call (BackupNotSynced). The message never
 * carries the token or a stored value.
 */
export type BackupErrorKind = "unreachable" | "sealed" | "auth-refused" | "invalid-response" | "failed";

export class BackupError extends Error {
  readonly kind: BackupErrorKind;
  readonly status: number | undefined;

  constructor(kind: BackupErrorKind, message: string, status?: number) {
    super(message);
    this.name = "BackupError";
    this.kind = kind;
    this.status = status;
  }
}

/** True when the error means the store cannot be used at all, rather than one call failing. */
export function isStoreUnavailable(err: unknown): boolean {
  return err instanceof BackupError && ["unreachable", "sealed", "auth-refused"].includes(err.kind);
}

export function sameData(a: StoredData, b: StoredData): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

export function confirmation(expected: StoredVersion, found: StoredVersion | undefined): Confirmation {
  if (!found) return { confirmed: false, reason: "missing" };
  if (found.version !== expected.version) return { confirmed: false, reason: "version-mismatch" };
  if (!sameData(found.data, expected.data)) return { confirmed: false, reason: "content-mismatch" };
  return { confirmed: true };
}

export type BackupResult =
  | { synced: true; version: number; written: boolean }
  | { synced: false; reason: Exclude<Confirmation, { confirmed: true }>["reason"] };

/**
 * Makes `path` hold `data`, confirmed by a read-back: a path that already holds it is left alone (no new
 * version per pass); otherwise the data is written and the written version read back. A store that
 * remembers what it saw a moment ago spares the first read. Errors of the store itself are thrown as
 * BackupError.
 *
 * The path's custom_metadata is set to `metadata` when the read or the write's answer shows it differs
 * (a new path, a new generation, another owner), so a pass that finds it right writes nothing. Only the
 * data vouches for the delivery: a refused metadata write (a policy without `update` on `metadata/`)
 * is counted by the store's metrics and tried again by the next pass, and the delivery goes ahead.
 */
export async function backUp(
  store: CredentialStore,
  path: string,
  data: StoredData,
  metadata: StoredMetadata,
): Promise<BackupResult> {
  const seen = store.recentlySeen?.(path, data, metadata);
  if (seen?.holds) {
    if (!seen.described) await describe(store, path, metadata);
    return { synced: true, version: seen.version, written: false };
  }
  // Seen holding other data a moment ago: it is written without reading first.
  const current = seen ? undefined : await store.read(path);
  if (current && sameData(current.data, data)) {
    if (!sameData(current.metadata ?? {}, metadata)) await describe(store, path, metadata);
    return { synced: true, version: current.version, written: false };
  }
  const written = await store.write(path, data);
  const described = sameData(written.metadata ?? {}, metadata) || (await describe(store, path, metadata));
  const check = await store.confirm(path, {
    version: written.version,
    data,
    metadata: described ? metadata : written.metadata,
  });
  return check.confirmed
    ? { synced: true, version: written.version, written: true }
    : { synced: false, reason: check.reason };
}

/** Sets the path's custom_metadata; false when the store refused it (see backUp). */
async function describe(store: CredentialStore, path: string, metadata: StoredMetadata): Promise<boolean> {
  try {
    await store.describe(path, metadata);
    return true;
  } catch (err) {
    if (err instanceof BackupError) return false;
    throw err;
  }
}

const segment = /^[A-Za-z0-9_.-]+$/;

/**
 * A KV path this project writes: slash-separated segments of letters, digits, '.', '_' and '-', without
 * empty, '.' or '..' segments, so that a purge can never reach beyond the path it was given.
 */
export function checkPath(path: string): string {
  const parts = path.split("/");
  if (!parts.every((p) => segment.test(p) && p !== "." && p !== "..")) {
    throw new BackupError("failed", `"${path}" is not a valid secret store path`);
  }
  return path;
}
