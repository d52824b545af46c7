import { STATUS_CODES } from "node:http";
import type * as k8s from "@kubernetes/client-node";
import { userAgent } from "../base/build.ts";
import { apiWriteOf, type ApiWrite } from "./api-write.ts";
import { exchange } from "./exchange.ts";
import { clientNodeAccess, clientNodeReason, directAccess, type KubeAccess } from "./kube-access.ts";
import type { Kubeconfig } from "./kubeconfig.ts";

// A thin JSON client for any kind and its watches, on one connection pool per cluster. It uses
// undici's request API rather than fetch, whose web streams add CPU to every request and watch event.

export interface Kind {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: k8s.V1ObjectMeta;
  [field: string]: unknown;
}

export interface KubeList {
  metadata?: { resourceVersion?: string; continue?: string };
  items: KubeObject[];
}

export function apiVersionOf(kind: Kind): string {
  return kind.group ? `${kind.group}/${kind.version}` : kind.version;
}

export function apiPath(kind: Kind, namespace?: string, name?: string, subresource?: string): string {
  const base = kind.group ? `/apis/${kind.group}/${kind.version}` : `/api/${kind.version}`;
  const ns = kind.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  const item = name ? `/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ""}` : "";
  return `${base}${ns}/${kind.plural}${item}`;
}

export class KubeApiError extends Error {
  override name = "KubeApiError";
  readonly code: number;
  readonly reason: string;
  /** The API server's own message (its Status body), without the request. */
  readonly detail: string;
  constructor(method: string, path: string, code: number, reason: string, message: string) {
    super(`${method} ${path}: ${code} ${reason}${message ? `: ${message}` : ""}`);
    this.code = code;
    this.reason = reason;
    this.detail = message;
  }
}

export function isApiStatus(error: unknown, code: number): boolean {
  return error instanceof KubeApiError && error.code === code;
}

/** One request as the metrics count it: each answer, a retried one too; `write` undefined for a read. */
export interface ObservedRequest {
  method: string;
  code: string;
  host: string;
  write: ApiWrite | undefined;
}

export type RequestObserver = (request: ObservedRequest) => void;

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  /**
   * The caller has no use for a successful answer's body (a status write's, a delete's): it is dropped
   * unparsed, which spares parsing the whole object, managedFields and all, on every such write.
   */
  discard?: boolean;
}

export class KubeRest {
  readonly config: Kubeconfig;
  private readonly observe: RequestObserver | undefined;
  private readonly userAgent: string;
  private access: KubeAccess | Promise<KubeAccess> | undefined;

  /**
   * Throws when a file the kubeconfig names cannot be read. `agent` is the User-Agent of every request
   * (base/build.ts): the controllers' by default.
   */
  constructor(config: Kubeconfig, observe?: RequestObserver, agent = userAgent("controller")) {
    this.config = config;
    this.observe = observe;
    this.userAgent = agent;
    if (!clientNodeReason(config)) this.access = directAccess(config);
  }

  server(): string {
    return this.config.cluster.server;
  }

  private connect(): KubeAccess | Promise<KubeAccess> {
    this.access ??= clientNodeAccess(this.config).catch((error: unknown) => {
      this.access = undefined;
      throw error;
    });
    return this.access;
  }

  private url(path: string, query: Record<string, string | number | boolean | undefined> = {}): URL {
    const url = new URL(this.server() + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  private async headers(access: KubeAccess): Promise<Record<string, string>> {
    return { ...(await access.headers()), accept: "application/json", "user-agent": this.userAgent };
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = this.url(path, options.query);
    const write = this.observe && apiWriteOf(method, path, options.contentType);
    const observe = (code: string) => this.observe?.({ method, code, host: url.host, write });
    let response;
    try {
      const access = await this.connect();
      const headers = await this.headers(access);
      let body: string | undefined;
      if (options.body !== undefined) {
        headers["content-type"] = options.contentType ?? "application/json";
        body = JSON.stringify(options.body);
      }
      response = await exchange(
        access.dispatcher,
        url,
        { method, headers, body, signal: options.signal ?? AbortSignal.timeout(60_000) },
        (code) => observe(String(code)),
      );
    } catch (error) {
      observe("<error>");
      throw new Error(`${method} ${path}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    observe(String(response.statusCode));
    if (options.discard && ok(response.statusCode)) {
      await response.body.dump();
      return undefined as T;
    }
    const text = await response.body.text();
    if (!ok(response.statusCode)) throw apiError(method, path, response.statusCode, text);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * Starts a watch: resolves once the server answered (or the watch failed), with the controller that
   * ends it. `onEvent` gets each event; `done` runs once when the watch ends, with the error if it
   * failed: a KubeApiError for a refused watch, a TimeoutError when nothing came for
   * `inactivityTimeoutMs`, an AbortError when the controller ended it.
   */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: string, object: KubeObject) => void,
    done: (error?: unknown) => void,
    inactivityTimeoutMs: number,
    /**
     * Ends the watch too, also before the API server's answer began: the returned controller exists
     * only then, and a stop must not wait for an answer that may be long in coming.
     */
    signal?: AbortSignal,
  ): Promise<AbortController> {
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) controller.abort();
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, inactivityTimeoutMs);
      timer.unref();
    };
    let ended = false;
    const end = (error?: unknown) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      controller.abort();
      done(
        timedOut ? new DOMException(`no watch event for ${inactivityTimeoutMs} ms`, "TimeoutError") : error,
      );
    };
    arm();
    let response;
    try {
      const access = await this.connect();
      response = await exchange(access.dispatcher, this.url(path, { ...query, watch: true }), {
        method: "GET",
        headers: await this.headers(access),
        signal: controller.signal,
      });
    } catch (error) {
      end(error);
      return controller;
    }
    if (response.statusCode !== 200) {
      const text = await response.body.text().catch(() => "");
      end(apiError("GET", path, response.statusCode, text));
      return controller;
    }
    arm();
    void readLines(response.body, arm, (line) => {
      const event = JSON.parse(line) as { type?: unknown; object?: unknown };
      if (typeof event.type !== "string" || typeof event.object !== "object" || event.object === null) {
        throw new Error(`GET ${path}: a watch event without a type or an object`);
      }
      onEvent(event.type, event.object as KubeObject);
    }).then(() => end(), end);
    return controller;
  }

  /** Ends the connections, failing requests in flight; requests after this fail. */
  async close(): Promise<void> {
    const access = await this.access;
    await access?.close();
  }
}

const ok = (code: number): boolean => code >= 200 && code < 300;

function apiError(method: string, path: string, code: number, text: string): KubeApiError {
  let status: { reason?: string; message?: string } = {};
  try {
    status = JSON.parse(text) as typeof status;
  } catch {
    // not a Status object
  }
  return new KubeApiError(
    method,
    path,
    code,
    status.reason ?? STATUS_CODES[code] ?? "",
    status.message ?? "",
  );
}

/** Hands each newline-terminated line of a stream to `onLine`; `onChunk` runs for every chunk. */
async function readLines(
  body: AsyncIterable<Uint8Array>,
  onChunk: () => void,
  onLine: (line: string) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of body) {
    onChunk();
    buffered += decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let newline = buffered.indexOf("\n"); newline >= 0; newline = buffered.indexOf("\n", start)) {
      const line = buffered.slice(start, newline);
      start = newline + 1;
      if (line.trim()) onLine(line);
    }
    buffered = buffered.slice(start);
  }
  buffered += decoder.decode();
  if (buffered.trim()) onLine(buffered);
}

export function objectKey(object: KubeObject): string {
  const { namespace, name } = object.metadata ?? {};
  return namespace ? `${namespace}/${name ?? ""}` : (name ?? "");
}
