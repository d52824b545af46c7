// The credential backup on OpenBao KV v2, over its HTTP API (openbao-http.ts): the KV reads and writes,
// the path's custom_metadata and the health check, each one call through the store's session
// (openbao-session.ts), which carries the token and turns every failure into a BackupError
// (openbao-errors.ts). See docs/backup.md.
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { realClock, type Clock } from "../runtime/base/clock.ts";
import { openFence, type WriteFence } from "../runtime/base/write-fence.ts";
import { parse } from "./openbao-errors.ts";
import { openBaoHttp } from "./openbao-http.ts";
import { OpenBaoSession } from "./openbao-session.ts";
import type { BackupSettings } from "./settings.ts";
import {
  BackupError,
  checkPath,
  confirmation,
  type CredentialStore,
  type StoreHealth,
  type StoredData,
  type StoredMetadata,
  type StoredVersion,
} from "./store.ts";

/** A path's custom_metadata: null until some is written. */
const customMetadata = z.record(z.string(), z.string()).nullish();
const writeResponse = z.object({
  data: z.object({ version: z.number().int().positive(), custom_metadata: customMetadata }),
});
const readResponse = z.object({
  data: z.object({
    data: z.record(z.string(), z.string()).nullable(),
    metadata: z.object({
      version: z.number().int().positive(),
      destroyed: z.boolean(),
      deletion_time: z.string(),
      custom_metadata: customMetadata,
    }),
  }),
});
const healthResponse = z.object({ initialized: z.boolean(), sealed: z.boolean() });
const lookupResponse = z.object({ data: z.object({}).loose() });

export interface OpenBaoDeps {
  /** Reads the service-account token for Kubernetes auth. */
  readTokenFile?: (path: string) => Promise<string>;
  /** Only its `now` is read, to renew a Kubernetes-auth token before its lease ends. */
  clock?: Pick<Clock, "monotonic">;
  /** Asked right before each write (POST, DELETE on the KV mount) goes out: the Lease fence. */
  fence?: WriteFence;
}

/** The store's session and the KV v2 mount it writes under. */
interface Kv {
  session: OpenBaoSession;
  mount: string;
}

export function openBaoStore(settings: BackupSettings, deps: OpenBaoDeps = {}): CredentialStore {
  const session = new OpenBaoSession(settings, openBaoHttp(settings.address, settings.timeoutMs), {
    readTokenFile: deps.readTokenFile ?? ((p: string) => readFile(p, "utf8")),
    clock: deps.clock ?? realClock,
    fence: deps.fence ?? openFence,
  });
  const kv: Kv = { session, mount: settings.mount };
  return {
    write: (path, data) => write(kv, path, data),
    describe: (path, metadata) => describe(kv, path, metadata),
    read: (path) => read(kv, path),
    confirm: async (path, expected) => confirmation(expected, await read(kv, path)),
    purge: (path) => purge(kv, path),
    health: () => health(kv),
  };
}

function kvPath(kv: Kv, area: "data" | "metadata", path: string): string {
  return `${kv.mount}/${area}/${checkPath(path).split("/").map(encodeURIComponent).join("/")}`;
}

async function write(
  kv: Kv,
  path: string,
  data: StoredData,
): Promise<{ version: number; metadata: StoredMetadata }> {
  const what = `the write of "${path}"`;
  const body = await kv.session.call(
    what,
    { method: "POST", path: kvPath(kv, "data", path), body: { data } },
    Object.values(data),
  );
  const written = parse(writeResponse, body, what).data;
  return { version: written.version, metadata: written.custom_metadata ?? {} };
}

/** POST on `metadata/` replaces custom_metadata whole and leaves the path's other settings alone. */
async function describe(kv: Kv, path: string, metadata: StoredMetadata): Promise<void> {
  await kv.session.call(`the metadata write of "${path}"`, {
    method: "POST",
    path: kvPath(kv, "metadata", path),
    body: { custom_metadata: metadata },
  });
}

async function read(kv: Kv, path: string): Promise<StoredVersion | undefined> {
  const what = `the read of "${path}"`;
  let body: unknown;
  try {
    body = await kv.session.call(what, { method: "GET", path: kvPath(kv, "data", path) });
  } catch (err) {
    if (err instanceof BackupError && err.status === 404) return undefined;
    throw err;
  }
  const { data, metadata } = parse(readResponse, body, what).data;
  if (data === null || metadata.destroyed || metadata.deletion_time !== "") return undefined;
  return { version: metadata.version, data, metadata: metadata.custom_metadata ?? {} };
}

async function purge(kv: Kv, path: string): Promise<void> {
  const what = `the purge of "${path}"`;
  try {
    await kv.session.call(what, { method: "DELETE", path: kvPath(kv, "metadata", path) });
  } catch (err) {
    if (!(err instanceof BackupError && err.status === 404)) throw err;
  }
}

async function health({ session }: Kv): Promise<StoreHealth> {
  const address = session.address;
  try {
    // sys/health answers without a token, and with a body even when sealed, uninitialized or standby.
    const answer = await session.http.call({
      method: "GET",
      path: "sys/health?standbyok=true",
      answers: [429, 472, 473, 501, 503],
    });
    const body = parse(healthResponse, answer, "the health check");
    if (!body.initialized)
      return { ready: false, state: "sealed", message: `OpenBao at ${address} is not initialized` };
    if (body.sealed) return { ready: false, state: "sealed", message: `OpenBao at ${address} is sealed` };
    const self = await session.call("the token check", { method: "GET", path: "auth/token/lookup-self" });
    parse(lookupResponse, self, "the token check");
    return { ready: true, state: "ready" };
  } catch (err) {
    const failure = session.translate(err, "the health check");
    const state = failure.kind === "invalid-response" || failure.kind === "failed" ? "failing" : failure.kind;
    return { ready: false, state, message: failure.message };
  }
}
