import * as k8s from "@kubernetes/client-node";
import { fetch, type Dispatcher } from "undici";

// A thin JSON client for any kind, on top of client-node's authentication and TLS: the generated
// APIs cover neither arbitrary custom resources' /status nor apply-patch for every kind.

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

export type RequestObserver = (method: string, code: string, host: string) => void;

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
}

export class KubeRest {
  readonly config: k8s.KubeConfig;
  private readonly observe: RequestObserver | undefined;
  /**
   * client-node makes a new connection pool (TLS context, sockets) for every request it authenticates;
   * the first one is kept for all requests, so connections are reused instead of piling up.
   */
  private dispatcher: Dispatcher | undefined;

  constructor(config: k8s.KubeConfig, observe?: RequestObserver) {
    this.config = config;
    this.observe = observe;
  }

  server(): string {
    const cluster = this.config.getCurrentCluster();
    if (!cluster) throw new Error("the kubeconfig has no current cluster");
    return cluster.server;
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = new URL(this.server() + path);
    for (const [k, v] of Object.entries(options.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const context = new k8s.RequestContext(url.toString(), method as k8s.HttpMethod);
    await this.config.applySecurityAuthentication(context);
    this.dispatcher ??= context.getDispatcher() as Dispatcher | undefined;
    const headers: Record<string, string> = { ...context.getHeaders(), accept: "application/json" };
    let body: string | undefined;
    if (options.body !== undefined) {
      headers["content-type"] = options.contentType ?? "application/json";
      body = JSON.stringify(options.body);
    }
    let response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body,
        dispatcher: this.dispatcher,
        signal: options.signal ?? AbortSignal.timeout(60_000),
      });
    } catch (error) {
      this.observe?.(method, "<error>", url.host);
      throw new Error(`${method} ${path}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    this.observe?.(method, String(response.status), url.host);
    const text = await response.text();
    if (!response.ok) {
      let status: { reason?: string; message?: string } = {};
      try {
        status = JSON.parse(text) as typeof status;
      } catch {
        // not a Status object
      }
      throw new KubeApiError(
        method,
        path,
        response.status,
        status.reason ?? response.statusText,
        status.message ?? "",
      );
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Starts a watch; `done` runs once when it ends, with the error if it failed. */
  watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: string, object: KubeObject) => void,
    done: (error?: unknown) => void,
    inactivityTimeoutMs: number,
  ): Promise<AbortController> {
    const watch = new k8s.Watch(this.config);
    // The library's default inactivity timeout (30 s) would cut quiet watches; ours end by timeoutSeconds.
    (watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs = inactivityTimeoutMs;
    const clean = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
    return watch.watch(path, clean, onEvent, (error) => done(error ?? undefined));
  }
}

export function objectKey(object: KubeObject): string {
  const { namespace, name } = object.metadata ?? {};
  return namespace ? `${namespace}/${name ?? ""}` : (name ?? "");
}
