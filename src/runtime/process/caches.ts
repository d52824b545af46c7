import type { Logger } from "pino";
import { Gauge, type Registry } from "prom-client";
import type { Clock } from "../base/clock.ts";
import { matchesSelector } from "../base/selector.ts";
import type { Cluster } from "../port/cluster.ts";
import { Informer } from "../port/informer.ts";
import type { CachedObjects, KubeCache } from "../port/kube.ts";
import { objectKey, type Kind, type KubeObject } from "../port/kube-rest.ts";
import type { CacheIndex } from "../port/object-index.ts";
import { sharedSecrets } from "../port/secret-bound.ts";
import { isSecretKind, limitOf, watchNamespaces, type ScopeLimits } from "../port/watch-scope.ts";
import type { Request } from "../loop/controller.ts";
import type { ControllerSpec, WatchSpec } from "./controller-declaration.ts";
import type { Metrics, WatchEvent } from "../loop/metrics.ts";
import type { RuntimeConfig } from "./config.ts";

// The caches of one engaged cluster: one informer per kind, namespace and label selector, feeding the
// queues of the controllers that watch it, and read by the cluster's Kubernetes port and the reconcilers.

export interface CacheSettings {
  config: RuntimeConfig;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
}

/** Where a watch's requests go: the queue of the controller that declared it. */
export interface Queue {
  enqueue(request: Request): void;
}

/** An informer with the parts of its id: kind, namespace ("" for all) and label selector. */
interface Filed {
  scope: string;
  labelSelector: string;
  informer: Informer;
}

export class ClusterCaches {
  private readonly informers = new Map<string, Informer>();
  /** The informers by kind, filed once they are all made: a cache read must not parse every id. */
  private readonly byKind = new Map<string, Filed[]>();
  private readonly cluster: Cluster;
  private readonly settings: CacheSettings;
  private readonly limits: ScopeLimits;
  private readonly secrets = sharedSecrets();

  /** The caches of `specs`' watches on `cluster`, each feeding the queue of its controller. */
  constructor(
    cluster: Cluster,
    specs: readonly ControllerSpec[],
    queues: ReadonlyMap<string, Queue>,
    settings: CacheSettings,
  ) {
    this.cluster = cluster;
    this.settings = settings;
    this.limits = { cluster: cluster.namespaces, secrets: settings.config["secret-namespaces"] };
    const watches = specs.flatMap((spec) =>
      spec.watches
        .filter((w) => w.clusters !== "management" || cluster.name === "")
        .map((watch) => ({ spec, watch })),
    );
    // One cache per kind and namespace where any watch takes every object of it: two caches of the same
    // objects would each see an event at their own moment, and a read could find the older copy.
    const everything = new Set(
      watches.flatMap(({ watch }) =>
        watch.labelSelector ? [] : this.scopes(watch).map((ns) => `${kindId(watch.kind)}|${ns ?? ""}`),
      ),
    );
    for (const { spec, watch } of watches) {
      const queue = queues.get(spec.name);
      if (!queue) continue;
      for (const namespace of this.scopes(watch)) {
        const scope = `${kindId(watch.kind)}|${namespace ?? ""}`;
        const selector = everything.has(scope) ? "" : (watch.labelSelector ?? "");
        const informer = this.informer(`${scope}|${selector}`, watch.kind, namespace, selector);
        this.feed(informer, selector, spec.name, watch, queue);
      }
    }
    for (const [id, informer] of this.informers) {
      const [kindPart = "", scope = "", labelSelector = ""] = id.split("|");
      this.byKind.set(kindPart, [...(this.byKind.get(kindPart) ?? []), { scope, labelSelector, informer }]);
    }
  }

  get size(): number {
    return this.informers.size;
  }

  start(): void {
    for (const informer of this.informers.values()) informer.start();
  }

  async stop(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }

  /** Whether every cache has synced. */
  synced(): boolean {
    return [...this.informers.values()].every((i) => i.synced());
  }

  /** Whether every cache has synced but those of kinds the cluster does not serve (a CRD not installed). */
  syncedWhereServed(): boolean {
    return [...this.informers.values()].every((i) => i.synced() || i.kindNotServed());
  }

  /** A cached object: the informer of `kind` that holds `namespace/name`. */
  get(kind: Kind, namespace: string, name: string): KubeObject | undefined {
    const key = objectKey({ metadata: { namespace, name } });
    for (const { informer } of this.ofKind(kind)) {
      const hit = informer.get(key);
      if (hit) return hit;
    }
    return undefined;
  }

  /** Every cached object of `kind`, across the informers that hold that kind. */
  list(kind: Kind): KubeObject[] {
    return this.acrossInformers(kind, (informer) => informer.list());
  }

  /**
   * The cached objects of `kind` in `namespace` that `index` files under `value`, across the informers
   * that hold that kind; each builds the index the first time it is asked.
   */
  byIndex(kind: Kind, index: CacheIndex, namespace: string, value: string): KubeObject[] {
    return this.acrossInformers(kind, (informer) => informer.byIndex(index, namespace, value));
  }

  /** The synced caches as the Kubernetes port's cache (../port/kube.ts). */
  forPort(): KubeCache {
    return informerCache(
      (kind) => this.ofKind(kind),
      (kind) => limitOf(kind, this.cluster.name, this.limits),
    );
  }

  private scopes(watch: WatchSpec): (string | undefined)[] {
    return watch.kind.namespaced
      ? watchNamespaces(watch.namespace, limitOf(watch.kind, this.cluster.name, this.limits))
      : [undefined];
  }

  private ofKind(kind: Kind): readonly Filed[] {
    return this.byKind.get(kindId(kind)) ?? [];
  }

  private acrossInformers(kind: Kind, read: (informer: Informer) => KubeObject[]): KubeObject[] {
    const informers = this.ofKind(kind).map((f) => f.informer);
    const [only, ...more] = informers;
    if (only && more.length === 0) return read(only);
    const seen = new Map<string, KubeObject>();
    for (const informer of informers)
      for (const object of read(informer)) seen.set(objectKey(object), object);
    return [...seen.values()];
  }

  /** The informer `id`, created the first time a watch needs it. */
  private informer(id: string, kind: Kind, namespace: string | undefined, selector: string): Informer {
    const existing = this.informers.get(id);
    if (existing) return existing;
    const { config, clock, log } = this.settings;
    const informer = new Informer({
      rest: this.cluster.rest,
      kind,
      ...(namespace ? { namespace } : {}),
      ...(selector ? { labelSelector: selector } : {}),
      clock,
      log: log.child({ cluster: this.cluster.name, kind: kind.kind, ...(namespace ? { namespace } : {}) }),
      resyncMs: config["resync-period"],
      watchRestartMs: config["watch-restart-period"],
      ...(isSecretKind(kind) ? { transform: this.secrets } : {}),
    });
    this.informers.set(id, informer);
    return informer;
  }

  /** Hands the requests `watch` draws from the events of `informer` (of `selector`) to `queue`. */
  private feed(
    informer: Informer,
    selector: string,
    controller: string,
    watch: WatchSpec,
    queue: Queue,
  ): void {
    const cluster = this.cluster.name;
    const map = watch.map ?? selfRequest;
    const count = this.settings.metrics.watchEvents(controller, watch.kind.kind);
    // A shared cache holds more than this watch asked for: its own selector filters the events.
    const wanted = (object: KubeObject) =>
      selector === (watch.labelSelector ?? "") ||
      matchesSelector(watch.labelSelector ?? "", object.metadata?.labels);
    const enqueue = (event: WatchEvent, object: KubeObject) => {
      if (!wanted(object)) return;
      const requests = map(object, cluster);
      count(event, requests.length > 0 ? "enqueued" : "ignored");
      for (const request of requests) queue.enqueue(request);
    };
    const passes = watch.update ?? (() => true);
    const added = watch.add ?? (() => true);
    const removed = watch.delete ?? (() => true);
    const judge = (event: WatchEvent, seen: KubeObject, verdict: boolean | Promise<boolean>) => {
      const decide = (pass: boolean) => {
        if (pass) enqueue(event, seen);
        else if (wanted(seen)) count(event, "filtered");
      };
      if (typeof verdict === "boolean") decide(verdict);
      else void verdict.then(decide, () => decide(true));
    };
    informer.addHandler({
      add: (object) => judge("add", object, added(object, cluster)),
      update: (previous, object) =>
        judge("update", wanted(object) ? object : previous, passes(previous, object, cluster)),
      delete: (object) => judge("delete", object, removed(object, cluster)),
      resync: (object) => enqueue("resync", object),
    });
  }
}

/** vhost_broker_cluster_caches_synced of each engaged cluster, read at each scrape. */
export function registerSyncedGauge(
  registry: Registry,
  engaged: ReadonlyMap<string, { caches: ClusterCaches }>,
): void {
  new Gauge({
    name: "vhost_broker_cluster_caches_synced",
    help: "1 when every cache of an engaged cluster has synced; a target stuck at 0 cannot be listed (RBAC, a missing CRD)",
    labelNames: ["cluster"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [name, e] of engaged) {
        this.set({ cluster: name }, e.caches.synced() ? 1 : 0);
      }
    },
  });
}

/**
 * The synced informers of a cluster as the port's cache. Where a kind is limited to some namespaces,
 * "every namespace" is every namespace of the limit: the per-namespace caches of one selector that
 * cover the whole limit answer it together, and nothing asks the API server for all of them.
 */
function informerCache(
  ofKind: (kind: Kind) => readonly Filed[],
  limitOf: (kind: Kind) => readonly string[] | undefined,
): KubeCache {
  return {
    limitOf,
    caches(kind: Kind, namespace: string): CachedObjects[] {
      const out: CachedObjects[] = [];
      const limit = namespace === "" ? limitOf(kind) : undefined;
      const bySelector = new Map<string, Map<string, Informer>>();
      for (const { scope, labelSelector, informer } of ofKind(kind)) {
        if (!informer.synced()) continue;
        if (limit && scope !== "") {
          const group = bySelector.get(labelSelector) ?? new Map<string, Informer>();
          bySelector.set(labelSelector, group.set(scope, informer));
        }
        if (scope !== "" && scope !== namespace) continue;
        out.push({
          labelSelector,
          get: (ns, name) => informer.get(objectKey({ metadata: { namespace: ns, name } })),
          // "" on a namespaced kind is every namespace, as in a list request: a scan of this selection.
          list: (ns, selector) =>
            ns === "" && kind.namespaced
              ? informer.list().filter((o) => matchesSelector(selector, o.metadata?.labels))
              : informer.select(ns, selector),
          byIndex: (index, ns, value) => informer.byIndex(index, ns, value),
        });
      }
      for (const [labelSelector, group] of bySelector) {
        if (!limit?.every((ns) => group.has(ns))) continue;
        const each = [...group.values()];
        out.push({
          labelSelector,
          get: (ns, name) => group.get(ns)?.get(objectKey({ metadata: { namespace: ns, name } })),
          list: (_ns, selector) =>
            each.flatMap((i) => i.list().filter((o) => matchesSelector(selector, o.metadata?.labels))),
          byIndex: (index, _ns, value) => [...group].flatMap(([ns, i]) => i.byIndex(index, ns, value)),
        });
      }
      return out;
    },
  };
}

function selfRequest(object: KubeObject, cluster: string): Request[] {
  return [{ cluster, namespace: object.metadata?.namespace ?? "", name: object.metadata?.name ?? "" }];
}

function kindId(kind: Kind): string {
  return `${kind.group}/${kind.version}/${kind.plural}`;
}
