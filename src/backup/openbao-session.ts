// The token the store's calls carry, and the call that carries it. Under Kubernetes auth the session
// logs in on first use, again before the token's lease ends, and once more when OpenBao refuses the
// token. Every failure leaves here as a BackupError (openbao-errors.ts) scrubbed of the token and the
// values a write carried.
import { z } from "zod";
import type { Clock } from "../runtime/base/clock.ts";
import type { WriteFence } from "../runtime/base/write-fence.ts";
import { parse, translate } from "./openbao-errors.ts";
import type { OpenBaoCall, OpenBaoHttp } from "./openbao-http.ts";
import type { BackupSettings } from "./settings.ts";
import { BackupError } from "./store.ts";

const loginResponse = z.object({
  auth: z.object({ client_token: z.string().min(1), lease_duration: z.number().nonnegative() }),
});

/** Log in again this long before a Kubernetes-auth token's lease ends. */
const RENEW_MARGIN_MS = 30_000;

export interface SessionDeps {
  readTokenFile: (path: string) => Promise<string>;
  clock: Pick<Clock, "monotonic">;
  fence: WriteFence;
}

export class OpenBaoSession {
  readonly http: OpenBaoHttp;
  private readonly settings: BackupSettings;
  private readonly deps: SessionDeps;
  /** The address without a trailing slash, as messages name it. */
  readonly address: string;
  private token: string | undefined;
  private tokenExpiresAt = Infinity;
  private login: Promise<void> | undefined;

  constructor(settings: BackupSettings, http: OpenBaoHttp, deps: SessionDeps) {
    this.settings = settings;
    this.http = http;
    this.deps = deps;
    this.address = settings.address.replace(/\/+$/, "");
    this.token = settings.auth.method === "token" ? settings.auth.token : undefined;
  }

  /** `err` of `what` as a BackupError; `extra` are the values the call carried (a write's). */
  translate(err: unknown, what: string, extra: Iterable<string> = []): BackupError {
    // Every secret an error message could echo: the token and, for a write, the written values.
    const auth = this.settings.auth;
    return translate(err, what, this.address, [
      this.token,
      auth.method === "token" ? auth.token : undefined,
      ...extra,
    ]);
  }

  /** One call with the current token; under Kubernetes auth a refused token is replaced once. */
  async call(what: string, request: OpenBaoCall, extra: Iterable<string> = []): Promise<unknown> {
    await this.ensureToken();
    // Right before the request, outside the try: a refusal is not translated into a BackupError. A
    // login (auth/*/login) does not come here: it changes nothing OpenBao holds for others.
    const write = request.method !== "GET";
    if (write) this.deps.fence.check(what);
    try {
      return await this.http.call({ ...request, token: this.token });
    } catch (err) {
      const failure = this.translate(err, what, extra);
      if (failure.kind !== "auth-refused" || this.settings.auth.method !== "kubernetes") throw failure;
    }
    this.token = undefined;
    await this.ensureToken();
    if (write) this.deps.fence.check(what);
    try {
      return await this.http.call({ ...request, token: this.token });
    } catch (err) {
      throw this.translate(err, what, extra);
    }
  }

  private async ensureToken(): Promise<void> {
    if (this.settings.auth.method !== "kubernetes") return;
    if (this.token && this.deps.clock.monotonic() < this.tokenExpiresAt - RENEW_MARGIN_MS) return;
    this.login ??= this.logIn().finally(() => (this.login = undefined));
    await this.login;
  }

  private async logIn(): Promise<void> {
    if (this.settings.auth.method !== "kubernetes") return;
    const { role, tokenFile, mountPath } = this.settings.auth;
    let jwt: string;
    try {
      jwt = (await this.deps.readTokenFile(tokenFile)).trim();
    } catch {
      throw new BackupError("auth-refused", `the service-account token file ${tokenFile} cannot be read`);
    }
    const what = `the Kubernetes login with role "${role}"`;
    let body: unknown;
    try {
      // A login presents the service-account token only.
      body = await this.http.call({ method: "POST", path: `auth/${mountPath}/login`, body: { role, jwt } });
    } catch (err) {
      const failure = this.translate(err, what, [jwt]);
      // OpenBao refuses an unknown role or a rejected JWT with 400 or 403: either way, not logged in.
      const refused = failure.status !== undefined && failure.status >= 400 && failure.status < 500;
      throw refused ? new BackupError("auth-refused", failure.message, failure.status) : failure;
    }
    const auth = parse(loginResponse, body, what).auth;
    this.token = auth.client_token;
    this.tokenExpiresAt =
      auth.lease_duration > 0 ? this.deps.clock.monotonic() + auth.lease_duration * 1000 : Infinity;
  }
}
