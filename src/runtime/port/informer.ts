import type { Logger } from "pino";
import { sleep, type Clock } from "../base/clock.ts";
import {
  KubeApiError,
  apiPath,
  objectKey,
  type Kind,
  type KubeList,
  type KubeObject,
  type KubeRest,
} from "./kube-rest.ts";
import { isNotServed } from "./kube.ts";
import type { CacheIndex } from "./object-index.ts";
import { ObjectStore, cacheable } from "./object-store.ts";

// A list/watch cache of one kind in one scope: lists, then watches from the list's resourceVersion;
// lists again on 410 Gone; restarts with backoff after any other failure; ends each watch after a
// while so a silently dead connection is never trusted for long; and periodically hands every
// cached object to the handlers again (resync), so that nothing waits forever on a missed event.
// Its objects are kept, and read by namespace, label or index, in an ObjectStore (object-store.ts).

export interface InformerHandler {
  add(object: KubeObject): void;
  update(previous: KubeObject, object: KubeObject): void;
  delete(object: KubeObject): void;
  /** Every cached object, once per resync period. */
  resync?(object: KubeObject): void;
}

export interface InformerOptions {
  rest: KubeRest;
  kind: Kind;
  namespace?: string;
  labelSelector?: string;
  clock: Clock;
  log: Logger;
  /** 0 disables resync. */
  resyncMs: number;
  /** A watch runs for a random time between this and twice this, then restarts from its resourceVersion. */
  watchRestartMs: number;
  /** A watch that sends no byte for this long is taken for dead and started again; 90 s by default. */
  watchSilenceMs?: number;
  /** What the cache keeps of each object (secret-bound.ts), before it is frozen; default all of it. */
  transform?: (object: KubeObject) => KubeObject;
}

// The API server sends a bookmark on a quiet watch about once a minute, since the informer asks for
// them; a connection silent for longer is dead (a partition that dropped it without a FIN or RST)
// and would otherwise be trusted for its whole life, minutes in which no event arrives.
const defaultWatchSilenceMs = 90_000;
const backoffBaseMs = 800;
const backoffMaxMs = 30_000;

export class Informer {
  private readonly cache = new ObjectStore();
  private readonly handlers: InformerHandler[] = [];
  private readonly stopping = new AbortController();
  private readonly options: InformerOptions;
  private resourceVersion: string | undefined;
  private hasSynced = false;
  private notServed = false;
  private running: Promise<void> | undefined;
  private activeWatch: AbortController | undefined;

  constructor(options: InformerOptions) {
    this.options = options;
  }

  /** Handlers added after start receive the cached objects as adds first. */
  addHandler(handler: InformerHandler): void {
    this.handlers.push(handler);
    for (const object of this.cache.values()) handler.add(object);
  }

  start(): void {
    if (this.running) return;
    this.running = this.run();
    if (this.options.resyncMs > 0) void this.resyncLoop();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.activeWatch?.abort();
    await this.running;
  }

  synced(): boolean {
    return this.hasSynced;
  }

  /**
   * The API server's last answer to a list was that it does not serve the kind (its CRD is not
   * installed). The informer goes on trying with backoff, and syncs once the kind is served.
   */
  kindNotServed(): boolean {
    return this.notServed;
  }

  get(key: string): KubeObject | undefined {
    return this.cache.get(key);
  }

  list(): KubeObject[] {
    return this.cache.list();
  }

  /** The cached objects of `namespace` that match `labelSelector`, as a filter of the cache would find them. */
  select(namespace: string, labelSelector: string): KubeObject[] {
    return this.cache.select(namespace, labelSelector);
  }

  /** The cached objects of `namespace` that `index` files under `value`. */
  byIndex(index: CacheIndex, namespace: string, value: string): KubeObject[] {
    return this.cache.byIndex(index, namespace, value);
  }

  private get log(): Logger {
    return this.options.log;
  }

  private async run(): Promise<void> {
    let failures = 0;
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      try {
        if (this.resourceVersion === undefined) {
          await this.relist();
          this.notServed = false;
          failures = 0;
        }
        const gone = await this.watchOnce();
        if (gone) {
          this.log.info("watch expired (410 Gone); listing again");
          this.resourceVersion = undefined;
        }
        failures = 0;
      } catch (error) {
        if (signal.aborted) break;
        if (error instanceof KubeApiError && error.code === 410) this.resourceVersion = undefined;
        const delay = Math.min(backoffBaseMs * 2 ** failures, backoffMaxMs);
        failures++;
        const notServed = !this.hasSynced && isNotServed(error);
        // A kind that is not installed is said once, not at every retry.
        if (notServed && !this.notServed) {
          this.log.info({ retryInMs: delay }, "the kind is not served; listing again until it is");
        } else if (!notServed) {
          this.log.warn({ err: error, retryInMs: delay }, "list/watch failed; restarting with backoff");
        }
        this.notServed = notServed;
        await sleep(this.options.clock, delay, signal);
      }
    }
  }

  private async relist(): Promise<void> {
    const { rest, kind, namespace, labelSelector } = this.options;
    const items: KubeObject[] = [];
    let resourceVersion: string | undefined;
    let next: string | undefined;
    do {
      const page = await rest.request<KubeList>("GET", apiPath(kind, namespace), {
        query: { labelSelector, limit: 500, continue: next },
        signal: AbortSignal.any([this.stopping.signal, AbortSignal.timeout(60_000)]),
      });
      for (const item of page.items) items.push(cacheable(item, kind, this.options.transform));
      resourceVersion = page.metadata?.resourceVersion;
      next = page.metadata?.continue || undefined;
    } while (next);
    this.replace(items);
    this.resourceVersion = resourceVersion;
    if (!this.hasSynced) this.log.debug({ objects: items.length }, "cache synced");
    this.hasSynced = true;
  }

  /** Makes the cache equal the list, telling handlers what changed, including what vanished. */
  private replace(items: KubeObject[]): void {
    const seen = new Set<string>();
    for (const object of items) {
      const key = objectKey(object);
      seen.add(key);
      this.upsert(key, object);
    }
    for (const [key, object] of this.cache.entries()) {
      if (seen.has(key)) continue;
      this.cache.remove(key, object);
      for (const h of this.handlers) h.delete(object);
    }
  }

  private upsert(key: string, object: KubeObject): void {
    const previous = this.cache.put(key, object);
    if (!previous) for (const h of this.handlers) h.add(object);
    else if (previous.metadata?.resourceVersion !== object.metadata?.resourceVersion) {
      for (const h of this.handlers) h.update(previous, object);
    }
  }

  /** Resolves when the watch ends; true when the resourceVersion is too old (410 Gone). */
  private watchOnce(): Promise<boolean> {
    const { rest, kind, namespace, labelSelector, watchRestartMs } = this.options;
    const timeoutSeconds = Math.max(1, Math.round((watchRestartMs * (1 + Math.random())) / 1000));
    const silenceMs = Math.min(
      this.options.watchSilenceMs ?? defaultWatchSilenceMs,
      (timeoutSeconds + 30) * 1000,
    );
    return new Promise<boolean>((resolve, reject) => {
      let gone = false;
      const onEvent = (type: string, object: KubeObject) => {
        if (type === "ERROR") {
          const status = object as { code?: number; message?: string };
          if (status.code === 410) gone = true;
          else this.log.warn({ code: status.code, message: status.message }, "watch reported an error");
          this.activeWatch?.abort();
          return;
        }
        const version = object.metadata?.resourceVersion;
        if (version) this.resourceVersion = version;
        if (type === "BOOKMARK") return;
        const key = objectKey(object);
        const full = cacheable(object, kind, this.options.transform);
        if (type === "DELETED") {
          const previous = this.cache.get(key);
          if (previous) this.cache.remove(key, previous);
          for (const h of this.handlers) h.delete(previous ?? full);
        } else this.upsert(key, full);
      };
      const done = (error?: unknown) => {
        // Debug: a watch of a kind nobody writes was seen without a bookmark for 90 s on a healthy API
        // server; it simply starts again from its version.
        if (isSilence(error)) this.log.debug({ silentMs: silenceMs }, "watch silent; watching again");
        if (gone || (error instanceof KubeApiError && error.code === 410)) resolve(true);
        else if (error && !this.stopping.signal.aborted && !isAbort(error)) reject(error);
        else resolve(false);
      };
      const query = {
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        labelSelector,
        timeoutSeconds,
      };
      rest
        .watch(apiPath(kind, namespace), query, onEvent, done, silenceMs, this.stopping.signal)
        .then((controller) => {
          this.activeWatch = controller;
          if (this.stopping.signal.aborted) controller.abort();
        }, reject);
    });
  }

  private async resyncLoop(): Promise<void> {
    const signal = this.stopping.signal;
    for (;;) {
      await sleep(this.options.clock, this.options.resyncMs, signal);
      if (signal.aborted) return;
      for (const object of this.cache.values()) for (const h of this.handlers) h.resync?.(object);
    }
  }
}

/** The end kube-rest gives a watch that sent nothing for its inactivity deadline. */
function isSilence(error: unknown): boolean {
  return error instanceof Error && error.name === "TimeoutError";
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");
}
