// The credential backup on OpenBao KV v2, over its HTTP API (openbao-http.ts). Every failure leaves
// this file as a BackupError built from the status, the network error's code and OpenBao's own
// messages, scrubbed of the token and the written values. See docs/backup.md.
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { realClock, type Clock } from "../runtime/base/clock.ts";
import { openFence, type WriteFence } from "../runtime/base/write-fence.ts";
import { scrub } from "../runtime/base/redact.ts";
import { openBaoHttp, OpenBaoRefusal, OpenBaoUnanswered, type OpenBaoCall } from "./openbao-http.ts";
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
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);

export interface OpenBaoDeps {
  /** Reads the service-account token for Kubernetes auth. */
  readTokenFile?: (path: string) => Promise<string>;
  /** Only its `now` is read, to renew a Kubernetes-auth token before its lease ends. */
  clock?: Pick<Clock, "monotonic">;
  /** Asked right before each write (POST, DELETE on the KV mount) goes out: the Lease fence. */
  fence?: WriteFence;
}

/** Log in again this long before a Kubernetes-auth token's lease ends. */
const RENEW_MARGIN_MS = 30_000;

export function openBaoStore(settings: BackupSettings, deps: OpenBaoDeps = {}): CredentialStore {
  const readTokenFile = deps.readTokenFile ?? ((p: string) => readFile(p, "utf8"));
  const clock = deps.clock ?? realClock;
  const fence = deps.fence ?? openFence;
  const http = openBaoHttp(settings.address, settings.timeoutMs);
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
    if (!(err instanceof OpenBaoRefusal)) {
      const code = err instanceof OpenBaoUnanswered ? err.code : undefined;
      if (code && networkCodes.has(code)) {
        return new BackupError(
          "unreachable",
          `OpenBao at ${address} is unreachable (${code}) during ${what}`,
        );
      }
      return new BackupError("failed", `${what} at OpenBao ${address} failed before a response`);
    }
    const status = err.status;
    const detail = scrub(err.errors.join("; ") || "no detail", secrets(extra))
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
      // A login presents the service-account token only.
      body = await http.call({ method: "POST", path: `auth/${mountPath}/login`, body: { role, jwt } });
    } catch (err) {
      const failure = translate(err, what, [jwt]);
      // OpenBao refuses an unknown role or a rejected JWT with 400 or 403: either way, not logged in.
      const refused = failure.status !== undefined && failure.status >= 400 && failure.status < 500;
      throw refused ? new BackupError("auth-refused", failure.message, failure.status) : failure;
    }
    const auth = parse(loginResponse, body, what).auth;
    token = auth.client_token;
    tokenExpiresAt = auth.lease_duration > 0 ? clock.monotonic() + auth.lease_duration * 1000 : Infinity;
  }

  async function ensureToken(): Promise<void> {
    if (settings.auth.method !== "kubernetes") return;
    if (token && clock.monotonic() < tokenExpiresAt - RENEW_MARGIN_MS) return;
    login ??= logIn().finally(() => (login = undefined));
    await login;
  }

  /** One call with the current token; under Kubernetes auth a refused token is replaced once. */
  async function call(what: string, request: OpenBaoCall, extra: Iterable<string> = []): Promise<unknown> {
    await ensureToken();
    // Right before the request, outside the try: a refusal is not translated into a BackupError. A
    // login (auth/*/login) does not come here: it changes nothing OpenBao holds for others.
    const write = request.method !== "GET";
    if (write) fence.check(what);
    try {
      return await http.call({ ...request, token });
    } catch (err) {
      const failure = translate(err, what, extra);
      if (failure.kind !== "auth-refused" || settings.auth.method !== "kubernetes") throw failure;
    }
    token = undefined;
    await ensureToken();
    if (write) fence.check(what);
    try {
      return await http.call({ ...request, token });
    } catch (err) {
      throw translate(err, what, extra);
    }
  }

  async function read(path: string): Promise<StoredVersion | undefined> {
    const what = `the read of "${path}"`;
    let body: unknown;
    try {
      body = await call(what, { method: "GET", path: kv("data", path) });
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
      const body = await call(
        what,
        { method: "POST", path: kv("data", path), body: { data } },
        Object.values(data),
      );
      return { version: parse(writeResponse, body, what).data.version };
    },

    read,

    async confirm(path: string, expected: StoredVersion) {
      return confirmation(expected, await read(path));
    },

    async purge(path: string) {
      const what = `the purge of "${path}"`;
      try {
        await call(what, { method: "DELETE", path: kv("metadata", path) });
      } catch (err) {
        if (!(err instanceof BackupError && err.status === 404)) throw err;
      }
    },

    async health(): Promise<StoreHealth> {
      try {
        // sys/health answers without a token, and with a body even when sealed, uninitialized or standby.
        const answer = await http.call({
          method: "GET",
          path: "sys/health?standbyok=true",
          answers: [429, 472, 473, 501, 503],
        });
        const body = parse(healthResponse, answer, "the health check");
        if (!body.initialized)
          return { ready: false, state: "sealed", message: `OpenBao at ${address} is not initialized` };
        if (body.sealed) return { ready: false, state: "sealed", message: `OpenBao at ${address} is sealed` };
        const self = await call("the token check", { method: "GET", path: "auth/token/lookup-self" });
        parse(lookupResponse, self, "the token check");
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
