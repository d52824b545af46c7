// The RabbitMQ management API client: one keep-alive undici Pool per broker (origin and CA), a
// timeout on every request, basic auth, zod-checked answers and typed errors in which the
// password never appears. Every write (PUT, POST, DELETE) first asks the write fence whether this
// process still leads (runtime/leadership/lease-fence.ts).
import type { LookupFunction } from "node:net";
import { Pool } from "undici";
import type { z } from "zod";
import {
  ManagementNotFoundError,
  ManagementResponseError,
  errorForFailure,
  errorForStatus,
} from "./errors.ts";
import { openFence, type WriteFence } from "../runtime/base/write-fence.ts";
import { scrub } from "../runtime/base/redact.ts";

/** Where a broker's management API is and how to log in to it. */
export interface ManagementConnection {
  /** Base URL, e.g. `https://rabbit.ns.svc:15671`; http is assumed without a scheme. A path is a prefix. */
  url: string;
  username: string;
  password: string;
  /** PEM bundle trusted for https; without it the system's CAs are. */
  ca?: string | undefined;
}

export interface ManagementClientOptions {
  /** Whole request, connection included (default 10 s). */
  requestTimeoutMs?: number;
  /** TCP and TLS connection set-up (default 5 s). */
  connectTimeoutMs?: number;
  /** Open connections per broker (default 4). */
  connectionsPerBroker?: number;
  /** Told how long each request took (failures included), e.g. for a latency metric. */
  observe?: ManagementRequestObserver;
  /** Asked right before each write goes out (the Lease fence); default: none. */
  fence?: WriteFence;
  /** How broker host names resolve; default: the system's resolver. */
  lookup?: LookupFunction;
}

export type ManagementRequestObserver = (method: string, seconds: number) => void;

export type DeleteOutcome = "deleted" | "absent";

/** Per request: `signal` ends it early (a caller's own deadline); the client's timeout applies anyway. */
export interface RequestOptions {
  signal?: AbortSignal | undefined;
}

/** One broker, one login. Cheap: the pool underneath is shared through ManagementClients. */
export class ManagementClient {
  readonly username: string;
  /** The broker and login, without the password: `username@url`. */
  readonly endpoint: string;
  readonly #pool: Pool;
  readonly #prefix: string;
  readonly #authorization: string;
  readonly #secrets: string[];
  readonly #timeoutMs: number;
  readonly #observe: ManagementRequestObserver | undefined;
  readonly #fence: WriteFence;

  constructor(
    pool: Pool,
    prefix: string,
    connection: ManagementConnection,
    timeoutMs: number,
    observe?: ManagementRequestObserver,
    fence: WriteFence = openFence,
  ) {
    this.#observe = observe;
    this.#fence = fence;
    this.#pool = pool;
    this.#prefix = prefix;
    this.username = connection.username;
    this.endpoint = `${connection.username}@${connection.url}`;
    this.#authorization = `Basic ${Buffer.from(`${connection.username}:${connection.password}`).toString("base64")}`;
    this.#secrets = [connection.password, this.#authorization.slice("Basic ".length)];
    this.#timeoutMs = timeoutMs;
  }

  /** GET and check the answer; a 404 throws ManagementNotFoundError. */
  async get<S extends z.ZodType>(path: string, schema: S, options: RequestOptions = {}): Promise<z.infer<S>> {
    const body = await this.#send("GET", path, undefined, options);
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      throw new ManagementResponseError(
        this.#redact(`GET ${path}: unexpected answer: ${parsed.error.issues[0]?.message ?? "invalid"}`),
      );
    }
    return parsed.data;
  }

  /** GET, with a 404 answered as undefined. */
  async find<S extends z.ZodType>(
    path: string,
    schema: S,
    options: RequestOptions = {},
  ): Promise<z.infer<S> | undefined> {
    try {
      return await this.get(path, schema, options);
    } catch (err) {
      if (err instanceof ManagementNotFoundError) return undefined;
      throw err;
    }
  }

  async put(path: string, body: unknown): Promise<void> {
    await this.#send("PUT", path, body);
  }

  async post(path: string, body: unknown): Promise<void> {
    await this.#send("POST", path, body);
  }

  /** DELETE; a 404 counts as done ("absent"). */
  async delete(path: string, options: RequestOptions = {}): Promise<DeleteOutcome> {
    try {
      await this.#send("DELETE", path, undefined, options);
      return "deleted";
    } catch (err) {
      if (err instanceof ManagementNotFoundError) return "absent";
      throw err;
    }
  }

  #redact(text: string): string {
    return scrub(text, this.#secrets);
  }

  async #send(
    method: "GET" | "PUT" | "POST" | "DELETE",
    path: string,
    body: unknown,
    options: RequestOptions = {},
  ): Promise<unknown> {
    // Before the request and its timing: a refusal is no broker failure, and is not translated into one.
    if (method !== "GET") this.#fence.check(`${method} ${path} on the broker`);
    const started = performance.now();
    try {
      return await this.#exchange(method, path, body, options.signal);
    } finally {
      this.#observe?.(method, (performance.now() - started) / 1000);
    }
  }

  async #exchange(
    method: "GET" | "PUT" | "POST" | "DELETE",
    path: string,
    body: unknown,
    callerSignal: AbortSignal | undefined,
  ): Promise<unknown> {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = callerSignal ? AbortSignal.any([timeout, callerSignal]) : timeout;
    let status: number;
    let text: string;
    try {
      const headers: Record<string, string> = {
        authorization: this.#authorization,
        // The limit endpoints answer 406 to a bare "application/json": a PUT there has no JSON to offer.
        accept: "application/json, */*;q=0.5",
      };
      if (body !== undefined) headers["content-type"] = "application/json";
      const res = await this.#pool.request({
        method,
        path: this.#prefix + path,
        headers,
        body: body === undefined ? null : JSON.stringify(body),
        signal,
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (failure) {
      throw errorForFailure(method, path, failure, signal.aborted, (t) => this.#redact(t));
    }
    if (status < 200 || status >= 300) {
      throw errorForStatus(method, path, status, this.#redact(text));
    }
    if (!text) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ManagementResponseError(`${method} ${path}: answer is not JSON`);
    }
  }
}

/** Normalises a management base URL: http without a scheme, no credentials, no trailing slash. */
export function parseManagementUrl(url: string): { origin: string; prefix: string } {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `http://${url}`;
  let parsed: URL;
  try {
    parsed = new URL(withScheme);
  } catch {
    throw new Error("the management URL is not a valid URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new Error(`the management URL must be http or https, not ${parsed.protocol}`);
  }
  // The message names no part of the URL: the userinfo is what it refuses.
  if (parsed.username || parsed.password) throw new Error("the management URL must not carry credentials");
  return { origin: parsed.origin, prefix: parsed.pathname.replace(/\/+$/, "") };
}

/** The pools of every broker this process talks to; `client()` is cheap, `close()` ends them all. */
export class ManagementClients {
  readonly #pools = new Map<string, Pool>();
  readonly #timeoutMs: number;
  readonly #connectTimeoutMs: number;
  readonly #connections: number;
  readonly #observe: ManagementRequestObserver | undefined;
  readonly #fence: WriteFence;
  readonly #lookup: LookupFunction | undefined;

  constructor(options: ManagementClientOptions = {}) {
    this.#lookup = options.lookup;
    this.#observe = options.observe;
    this.#fence = options.fence ?? openFence;
    this.#timeoutMs = options.requestTimeoutMs ?? 10_000;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
    this.#connections = options.connectionsPerBroker ?? 4;
  }

  client(connection: ManagementConnection): ManagementClient {
    const { origin, prefix } = parseManagementUrl(connection.url);
    const key = `${origin}\n${connection.ca ?? ""}`;
    let pool = this.#pools.get(key);
    if (!pool) {
      pool = new Pool(origin, {
        connections: this.#connections,
        keepAliveTimeout: 30_000,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
        connect: {
          timeout: this.#connectTimeoutMs,
          ...(connection.ca === undefined ? {} : { ca: connection.ca }),
          ...(this.#lookup ? { lookup: this.#lookup } : {}),
        },
      });
      this.#pools.set(key, pool);
    }
    return new ManagementClient(pool, prefix, connection, this.#timeoutMs, this.#observe, this.#fence);
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((p) => p.close()));
  }
}
