// The credential backup on OpenBao KV v2, through node-vault. node-vault is used for the HTTP calls
// only; nothing it throws leaves this file, because its errors hold the request (with the
// X-Vault-Token header and the written body). See docs/backup.md.
import { readFile } from "node:fs/promises";
import vault from "node-vault";
import { z } from "zod";
import { realClock, type Clock } from "../runtime/clock.ts";
import { scrub } from "../runtime/redact.ts";
import type { BackupSettings } from "./settings.ts";
import {
  BackupError,
  checkPath,
  confirmation,
  type BackupErrorKind,
  type CredentialStore,
  type StoreHealth,
  type StoredData,
  type StoredVersion,
} from "./store.ts";

const writeResponse = z.object({ data: z.object({ version: z.number().int().positive() }) });
const readResponse = z.object({
  data: z.object({
    data: z.record(z.string(), z.string()).nullable(),
    metadata: z.object({
      version: z.number().int().positive(),
      destroyed: z.boolean(),
      deletion_time: z.string(),
    }),
  }),
});
const healthResponse = z.object({ initialized: z.boolean(), sealed: z.boolean() });
const loginResponse = z.object({
  auth: z.object({ client_token: z.string().min(1), lease_duration: z.number().nonnegative() }),
});
const lookupResponse = z.object({ data: z.object({}).loose() });

const networkCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "ERR_SOCKET_CONNECTION_TIMEOUT",
]);

export interface OpenBaoDeps {
  /** Reads the service-account token for Kubernetes auth. */
  readTokenFile?: (path: string) => Promise<string>;
  /** Only its `now` is read, to renew a Kubernetes-auth token before its lease ends. */
  clock?: Pick<Clock, "now">;
}

/** Log in again this long before a Kubernetes-auth token's lease ends. */
const RENEW_MARGIN_MS = 30_000;

export function openBaoStore(settings: BackupSettings, deps: OpenBaoDeps = {}): CredentialStore {
  const readTokenFile = deps.readTokenFile ?? ((p: string) => readFile(p, "utf8"));
  const clock = deps.clock ?? realClock;
  // A no-op debug sink: node-vault's own debug output prints written data.
  const client = vault({
    endpoint: settings.address,
    apiVersion: "v1",
    debug: () => undefined,
    requestOptions: { timeout: settings.timeoutMs },
  });
  const address = settings.address.replace(/\/+$/, "");
  const kv = (area: "data" | "metadata", path: string) =>
    `${settings.mount}/${area}/${checkPath(path).split("/").map(encodeURIComponent).join("/")}`;

  let token: string | undefined = settings.auth.method === "token" ? settings.auth.token : undefined;
  let tokenExpiresAt = Infinity;
  let login: Promise<void> | undefined;

  /** Every secret an error message could echo: the token and, for a write, the written values. */
  const secrets = (extra: Iterable<string> = []) => [
    token,
    settings.auth.method === "token" ? settings.auth.token : undefined,
    ...extra,
  ];

  function translate(err: unknown, what: string, extra: Iterable<string> = []): BackupError {
    if (err instanceof BackupError) return err;
    const e = err as { code?: unknown; response?: { statusCode?: unknown; body?: unknown } };
    const status = typeof e?.response?.statusCode === "number" ? e.response.statusCode : undefined;
    if (status === undefined) {
      const code = typeof e?.code === "string" ? e.code : undefined;
      if (code && networkCodes.has(code)) {
        return new BackupError(
          "unreachable",
          `OpenBao at ${address} is unreachable (${code}) during ${what}`,
        );
      }
      return new BackupError("failed", `${what} at OpenBao ${address} failed before a response`);
    }
    const body = e.response?.body as { errors?: unknown } | undefined;
    const reported = Array.isArray(body?.errors)
      ? body.errors.filter((x) => typeof x === "string").join("; ")
      : "";
    const detail = scrub(reported || "no detail", secrets(extra))
      .replace(/\s+/g, " ")
      .trim();
    let kind: BackupErrorKind = "failed";
    if (status === 401 || status === 403) kind = "auth-refused";
    else if (status === 503 && /sealed/i.test(detail)) kind = "sealed";
    return new BackupError(kind, `OpenBao refused ${what} with status ${status}: ${detail}`, status);
  }

  function parse<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
    const result = schema.safeParse(body);
    if (result.success) return result.data;
    // Paths and codes only: zod's messages are safe today, but the values are credentials.
    const where = result.error.issues.map((i) => `${i.path.join(".") || "(root)"} ${i.code}`).join(", ");
    throw new BackupError("invalid-response", `OpenBao answered ${what} with an unexpected body: ${where}`);
  }

  async function logIn(): Promise<void> {
    if (settings.auth.method !== "kubernetes") return;
    const { role, tokenFile, mountPath } = settings.auth;
    let jwt: string;
    try {
      jwt = (await readTokenFile(tokenFile)).trim();
    } catch {
      throw new BackupError("auth-refused", `the service-account token file ${tokenFile} cannot be read`);
    }
    const what = `the Kubernetes login with role "${role}"`;
    let body: unknown;
    try {
      client.token = ""; // a login presents the service-account token only
      body = await client.write(`auth/${mountPath}/login`, { role, jwt });
    } catch (err) {
      const failure = translate(err, what, [jwt]);
      // OpenBao refuses an unknown role or a rejected JWT with 400 or 403: either way, not logged in.
      const refused = failure.status !== undefined && failure.status >= 400 && failure.status < 500;
      throw refused ? new BackupError("auth-refused", failure.message, failure.status) : failure;
    }
    const auth = parse(loginResponse, body, what).auth;
    token = auth.client_token;
    tokenExpiresAt = auth.lease_duration > 0 ? clock.now() + auth.lease_duration * 1000 : Infinity;
  }

  async function ensureToken(): Promise<void> {
    if (settings.auth.method !== "kubernetes") return;
    if (token && clock.now() < tokenExpiresAt - RENEW_MARGIN_MS) return;
    login ??= logIn().finally(() => (login = undefined));
    await login;
  }

  /** One call with the current token; under Kubernetes auth a refused token is replaced once. */
  async function call<T>(what: string, run: () => Promise<T>, extra: Iterable<string> = []): Promise<T> {
    await ensureToken();
    try {
      client.token = token ?? "";
      return await run();
    } catch (err) {
      const failure = translate(err, what, extra);
      if (failure.kind !== "auth-refused" || settings.auth.method !== "kubernetes") throw failure;
    }
    token = undefined;
    await ensureToken();
    try {
      client.token = token ?? "";
      return await run();
    } catch (err) {
      throw translate(err, what, extra);
    }
  }

  async function read(path: string): Promise<StoredVersion | undefined> {
    const what = `the read of "${path}"`;
    let body: unknown;
    try {
      body = await call(what, () => client.read(kv("data", path)));
    } catch (err) {
      if (err instanceof BackupError && err.status === 404) return undefined;
      throw err;
    }
    const { data, metadata } = parse(readResponse, body, what).data;
    if (data === null || metadata.destroyed || metadata.deletion_time !== "") return undefined;
    return { version: metadata.version, data };
  }

  return {
    async write(path: string, data: StoredData) {
      const what = `the write of "${path}"`;
      const body = await call(what, () => client.write(kv("data", path), { data }), Object.values(data));
      return { version: parse(writeResponse, body, what).data.version };
    },

    read,

    async confirm(path: string, expected: StoredVersion) {
      return confirmation(expected, await read(path));
    },

    async purge(path: string) {
      const what = `the purge of "${path}"`;
      try {
        await call(what, () => client.delete(kv("metadata", path)));
      } catch (err) {
        if (!(err instanceof BackupError && err.status === 404)) throw err;
      }
    },

    async health(): Promise<StoreHealth> {
      try {
        // sys/health answers without a token and with a body even when sealed or uninitialized.
        const body = parse(healthResponse, await client.health({ standbyok: true }), "the health check");
        if (!body.initialized)
          return { ready: false, state: "sealed", message: `OpenBao at ${address} is not initialized` };
        if (body.sealed) return { ready: false, state: "sealed", message: `OpenBao at ${address} is sealed` };
        await call("the token check", async () =>
          parse(lookupResponse, await client.tokenLookupSelf(), "the token check"),
        );
        return { ready: true, state: "ready" };
      } catch (err) {
        const failure = translate(err, "the health check");
        const state =
          failure.kind === "invalid-response" || failure.kind === "failed" ? "failing" : failure.kind;
        return { ready: false, state, message: failure.message };
      }
    },
  };
}
