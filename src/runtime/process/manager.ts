import type { Server } from "node:http";
import { Gauge } from "prom-client";
import type { Logger } from "pino";
import { sleep, type Clock } from "../base/clock.ts";
import type { Cluster, ClusterSource } from "../port/cluster.ts";
import type { RuntimeConfig } from "./config.ts";
import { Controller, type LaneSettings, type Reconciler, type Request } from "../loop/controller.ts";
import { Informer } from "../port/informer.ts";
import type { CacheIndex } from "../port/object-index.ts";
import { objectKey, type Kind, type KubeObject, type KubeRest } from "../port/kube-rest.ts";
import { RestKube, type CachedObjects, type KubeCache } from "../port/kube.ts";
import { matchesSelector } from "../base/selector.ts";
import { LeaderElector } from "../leadership/leader-election.ts";
import { LeaseFence } from "../leadership/lease-fence.ts";
import { openFence, type WriteFence } from "../base/write-fence.ts";
import type { Metrics, WatchEvent } from "../loop/metrics.ts";
import { MetricsAuthorizer } from "./metrics-auth.ts";
import { startMetricsServer, startProbeServer } from "./server.ts";
import { isSecretKind, limitOf, watchNamespaces, type ScopeLimits } from "../port/watch-scope.ts";
import { sharedSecrets } from "../port/secret-bound.ts";

// Runs controllers on every engaged cluster while this process leads: one informer per cluster,
// kind, namespace and label selector, feeding the queues of the controllers that watch it.

export interface WatchSpec {
  kind: Kind;
  /** Which clusters to watch: every engaged cluster (default) or the management cluster ("") only. */
  clusters?: "all" | "management";
  namespace?: string;
  labelSelector?: string;
  /** Which reconcile requests an object causes; default: the object itself. */
  map?: (object: KubeObject, cluster: string) => Request[];
  /**
   * Which updates cause requests; default: every update. See predicates.ts. A promise defers the
   * request until it settles (see own-writes.ts).
   */
  update?: (previous: KubeObject, object: KubeObject, cluster: string) => boolean | Promise<boolean>;
  /** Which additions cause requests; default: every one. */
  add?: (object: KubeObject, cluster: string) => boolean | Promise<boolean>;
  /** Which removals cause requests; default: every one. */
  delete?: (object: KubeObject, cluster: string) => boolean | Promise<boolean>;
}

export interface ControllerSpec {
  name: string;
  reconcile: Reconciler;
  watches: WatchSpec[];
  /** Workers of this controller; default `max-concurrent-reconciles`. */
  workers?: number;
  /** A lane per endpoint, each with its budget of the workers (controller.ts). */
  lanes?: LaneSettings;
}

export interface ManagerOptions {
  config: RuntimeConfig;
  log: Logger;
  metrics: Metrics;
  clock: Clock;
  clusters: ClusterSource;
  /** The management cluster's client. */
  management: KubeRest;
  /**
   * The Lease's own client on the management cluster (default: `management`): a connection of its own, so
   * that a renewal never waits behind the controllers' write storm.
   */
  lease?: KubeRest | undefined;
  identity: string;
}

interface Engaged {
  cluster: Cluster;
  informers: Map<string, Informer>;
  /** The Kubernetes port on this cluster, reading through its informers. */
  kube: RestKube;
}

function selfRequest(object: KubeObject, cluster: string): Request[] {
  return [{ cluster, namespace: object.metadata?.namespace ?? "", name: object.metadata?.name ?? "" }];
}

export class Manager {
  private readonly options: ManagerOptions;
  private readonly specs: ControllerSpec[] = [];
  private readonly controllers = new Map<string, Controller>();
  private readonly engaged = new Map<string, Engaged>();
  private readonly stopping = new AbortController();
  /** Aborted once the passes drained at shutdown: then the renewals stop and the Lease is released. */
  private readonly renewing = new AbortController();
  private renewal: Promise<boolean> | undefined;
  private elector: LeaderElector | undefined;
  /**
   * Asked before every write to a backend (lease-fence.ts): the Kubernetes port of every engaged
   * cluster asks it; the clients of the other backends are handed it where they are built. Open
   * (no fence) with --leader-elect=false.
   */
  readonly fence: WriteFence;
  private readonly servers: Server[] = [];
  private leading = false;

  constructor(options: ManagerOptions) {
    this.options = options;
    this.fence = options.config["leader-elect"]
      ? new LeaseFence({
          clock: options.clock,
          holdMs: options.config["renew-deadline"],
          log: options.log,
          onLapsed: () => this.elector?.stepDown(),
        })
      : openFence;
    const engaged = this.engaged;
    new Gauge({
      name: "vhost_broker_cluster_caches_synced",
      help: "1 when every cache of an engaged cluster has synced; a target stuck at 0 cannot be listed (RBAC, a missing CRD)",
      labelNames: ["cluster"],
      registers: [options.metrics.registry],
      collect() {
        this.reset();
        for (const [name, e] of engaged) {
          this.set({ cluster: name }, [...e.informers.values()].every((i) => i.synced()) ? 1 : 0);
        }
      },
    });
  }

  add(spec: ControllerSpec): void {
    const { config, clock, log, metrics } = this.options;
    this.specs.push(spec);
    // The watches of the controller's own kinds: a request whose object left them is not re-checked.
    const own = spec.watches.filter((w) => !w.map).map((w) => w.kind);
    this.controllers.set(
      spec.name,
      new Controller({
        name: spec.name,
        reconcile: spec.reconcile,
        workers: spec.workers ?? config["max-concurrent-reconciles"],
        ...(spec.lanes ? { lanes: spec.lanes } : {}),
        timeoutMs: config["reconcile-timeout"],
        transientRequeueMs: config["transient-requeue-interval"],
        terminalRetryMs: config["terminal-retry-interval"],
        drift: { minMs: config["drift-resync-min"], maxMs: config["drift-resync-max"] },
        ...(own.length > 0
          ? { exists: (r: Request) => own.some((k) => this.cached(r.cluster, k, r.namespace, r.name)) }
          : {}),
        clock,
        log,
        metrics,
      }),
    );
  }

  /** The cluster by name while it is engaged, for reconcilers. */
  cluster(name: string): Cluster | undefined {
    return this.engaged.get(name)?.cluster;
  }

  /** The names of the engaged clusters, the management cluster ("") among them. */
  engagedClusters(): string[] {
    return [...this.engaged.keys()];
  }

  /** The Kubernetes port on an engaged cluster, bound to a reconcile's signal. */
  kube(cluster: string, signal?: AbortSignal): RestKube | undefined {
    const kube = this.engaged.get(cluster)?.kube;
    return kube && signal ? kube.withSignal(signal) : kube;
  }

  /** A cached object: the informer of `kind` on `cluster` that holds `namespace/name`. */
  cached(cluster: string, kind: Kind, namespace: string, name: string): KubeObject | undefined {
    const key = objectKey({ metadata: { namespace, name } });
    for (const [id, informer] of this.engaged.get(cluster)?.informers ?? []) {
      if (!id.startsWith(`${kindId(kind)}|`)) continue;
      const hit = informer.get(key);
      if (hit) return hit;
    }
    return undefined;
  }

  /** A pass of `request` by the controller `name` at once (a backend found what its objects must redo). */
  enqueue(name: string, request: Request): void {
    this.controllers.get(name)?.enqueue(request);
  }

  /** Every cached object of `kind` on `cluster`, across the informers that hold that kind. */
  cachedList(cluster: string, kind: Kind): KubeObject[] {
    return this.acrossInformers(cluster, kind, (informer) => informer.list());
  }

  /**
   * The cached objects of `kind` on `cluster` in `namespace` that `index` files under `value`, across
   * the informers that hold that kind; each builds the index the first time it is asked.
   */
  cachedByIndex(
    cluster: string,
    kind: Kind,
    index: CacheIndex,
    namespace: string,
    value: string,
  ): KubeObject[] {
    return this.acrossInformers(cluster, kind, (informer) => informer.byIndex(index, namespace, value));
  }

  private acrossInformers(
    cluster: string,
    kind: Kind,
    read: (informer: Informer) => KubeObject[],
  ): KubeObject[] {
    const informers = [...(this.engaged.get(cluster)?.informers ?? [])]
      .filter(([id]) => id.startsWith(`${kindId(kind)}|`))
      .map(([, informer]) => informer);
    const [only, ...more] = informers;
    if (only && more.length === 0) return read(only);
    const seen = new Map<string, KubeObject>();
    for (const informer of informers)
      for (const object of read(informer)) seen.set(objectKey(object), object);
    return [...seen.values()];
  }

  isLeader(): boolean {
    return this.leading;
  }

  /**
   * Ready: a standby at once; a leader once the management cluster's caches have synced, but for those
   * of kinds the cluster does not serve (a CRD not installed: the objects that need it say so in their
   * conditions, and the cache syncs once it is installed). A target cluster or a backend that is down
   * shows in the metrics and the objects' conditions instead: held hostage here it would stall every
   * rollout.
   */
  ready(): { ready: boolean; why?: string } {
    if (this.stopping.signal.aborted) return { ready: false, why: "shutting down" };
    if (!this.leading) return { ready: true };
    const management = this.engaged.get("");
    if (!management) return { ready: false, why: "the management cluster is not engaged yet" };
    const synced = [...management.informers.values()].every((i) => i.synced() || i.kindNotServed());
    return synced ? { ready: true } : { ready: false, why: "the management cluster's caches are not synced" };
  }

  /** Whether every cache on `cluster` has synced (for the metrics). */
  synced(cluster: string): boolean {
    return [...(this.engaged.get(cluster)?.informers.values() ?? [])].every((i) => i.synced());
  }

  async startServers(): Promise<void> {
    const { config, metrics, log, management } = this.options;
    this.servers.push(
      await startProbeServer({ address: config["health-probe-bind-address"], ready: () => this.ready() }),
      await startMetricsServer({
        address: config["metrics-bind-address"],
        registry: metrics.registry,
        log,
        ...(config["metrics-secure"]
          ? {
              secure: {
                authorizer: new MetricsAuthorizer(management),
                certDir: config["metrics-cert-dir"],
              },
            }
          : {}),
      }),
    );
  }

  /**
   * Runs until `shutdown` is called (resolves "stopped") or the Lease is lost (resolves "lost";
   * work has already stopped; the process should exit).
   */
  async run(): Promise<"stopped" | "lost"> {
    const { config, clock, log, metrics, clusters } = this.options;
    const signal = this.stopping.signal;
    const leaseName = config["leader-election-id"];
    metrics.leaderStatus.set({ name: leaseName }, 0);
    if (config["leader-elect"]) {
      this.elector = new LeaderElector({
        rest: this.options.lease ?? this.options.management,
        namespace: config["leader-election-namespace"],
        name: leaseName,
        identity: this.options.identity,
        leaseDurationMs: config["lease-duration"],
        renewDeadlineMs: config["renew-deadline"],
        retryPeriodMs: config["retry-period"],
        clock,
        log,
        onStatus: (leading) => metrics.leaderStatus.set({ name: leaseName }, leading ? 1 : 0),
        ...(this.fence instanceof LeaseFence ? { fence: this.fence } : {}),
      });
      // A shutdown while acquiring: shutdown() releases what was just acquired; nothing starts.
      if (!(await this.elector.acquire(signal)) || signal.aborted) return "stopped";
    } else {
      metrics.leaderStatus.set({ name: leaseName }, 1);
    }
    this.leading = true;
    clusters.subscribe({ engage: (c) => this.engage(c), disengage: (name) => this.disengage(name) });
    for (const controller of this.controllers.values()) controller.start();
    await clusters.start();
    log.info({ controllers: [...this.controllers.keys()] }, "controllers started");
    // The renewals go on through a graceful shutdown's drain: they stop only once the passes ended.
    this.renewal = this.elector ? this.elector.keepRenewing(this.renewing.signal) : waitForAbort(signal);
    if (!(await this.renewal)) {
      await this.stopWork(true);
      return "lost";
    }
    return "stopped";
  }

  /**
   * Graceful shutdown (controller-runtime's LeaderElectionReleaseOnCancel): no new pass starts, the
   * passes in flight finish while the leader keeps renewing, and only then the renewals stop and the
   * Lease is released, so that a standby never takes over while this process still writes. A pass that
   * outlives the reconcile timeout (plus a little) is abandoned; release revokes the write fence first,
   * so it writes nothing more.
   */
  async shutdown(): Promise<void> {
    this.stopping.abort();
    await this.stopWork(false);
    this.renewing.abort();
    await this.renewal;
    await this.elector?.release();
    this.options.metrics.leaderStatus.set({ name: this.options.config["leader-election-id"] }, 0);
    await Promise.all(this.servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }

  private async stopWork(abort: boolean): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    const { clock, config, log } = this.options;
    const controllers = [...this.controllers.values()];
    const drained = Promise.all(controllers.map((c) => c.stop(abort))).then(() => true);
    if (!abort) {
      const grace = new AbortController();
      const graceMs = config["reconcile-timeout"] + DRAIN_SLACK_MS;
      const done = await Promise.race([drained, sleep(clock, graceMs, grace.signal).then(() => false)]);
      grace.abort();
      if (!done) {
        log.warn({ graceMs }, "passes still running after the reconcile timeout; abandoning them");
        await Promise.all(controllers.map((c) => c.stop(true)));
      }
    } else await drained;
    await this.options.clusters.stop();
    await Promise.all([...this.engaged.keys()].map((name) => this.disengage(name)));
  }

  private engage(cluster: Cluster): void {
    const { config, clock, log, metrics } = this.options;
    const informers = new Map<string, Informer>();
    const secrets = sharedSecrets();
    const limits: ScopeLimits = { cluster: cluster.namespaces, secrets: config["secret-namespaces"] };
    const scopes = (watch: WatchSpec) =>
      watch.kind.namespaced
        ? watchNamespaces(watch.namespace, limitOf(watch.kind, cluster.name, limits))
        : [undefined];
    const watches = this.specs.flatMap((spec) =>
      spec.watches
        .filter((w) => w.clusters !== "management" || cluster.name === "")
        .map((watch) => ({ spec, watch })),
    );
    // One cache per kind and namespace where any watch takes every object of it: two caches of the same
    // objects would each see an event at their own moment, and a read could find the older copy.
    const everything = new Set(
      watches.flatMap(({ watch }) =>
        watch.labelSelector ? [] : scopes(watch).map((ns) => `${kindId(watch.kind)}|${ns ?? ""}`),
      ),
    );
    for (const { spec, watch } of watches) {
      const controller = this.controllers.get(spec.name);
      if (!controller) continue;
      for (const namespace of scopes(watch)) {
        const scope = `${kindId(watch.kind)}|${namespace ?? ""}`;
        const selector = everything.has(scope) ? "" : (watch.labelSelector ?? "");
        const id = `${scope}|${selector}`;
        let informer = informers.get(id);
        if (!informer) {
          informer = new Informer({
            rest: cluster.rest,
            kind: watch.kind,
            ...(namespace ? { namespace } : {}),
            ...(selector ? { labelSelector: selector } : {}),
            clock,
            log: log.child({
              cluster: cluster.name,
              kind: watch.kind.kind,
              ...(namespace ? { namespace } : {}),
            }),
            resyncMs: config["resync-period"],
            watchRestartMs: config["watch-restart-period"],
            ...(isSecretKind(watch.kind) ? { transform: secrets } : {}),
          });
          informers.set(id, informer);
        }
        const map = watch.map ?? selfRequest;
        const count = metrics.watchEvents(spec.name, watch.kind.kind);
        // A shared cache holds more than this watch asked for: its own selector filters the events.
        const wanted = (object: KubeObject) =>
          selector === (watch.labelSelector ?? "") ||
          matchesSelector(watch.labelSelector ?? "", object.metadata?.labels);
        const enqueue = (event: WatchEvent, object: KubeObject) => {
          if (!wanted(object)) return;
          const requests = map(object, cluster.name);
          count(event, requests.length > 0 ? "enqueued" : "ignored");
          for (const request of requests) controller.enqueue(request);
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
          add: (object) => judge("add", object, added(object, cluster.name)),
          update: (previous, object) =>
            judge("update", wanted(object) ? object : previous, passes(previous, object, cluster.name)),
          delete: (object) => judge("delete", object, removed(object, cluster.name)),
          resync: (object) => enqueue("resync", object),
        });
      }
    }
    const cache = informerCache(informers, (kind) => limitOf(kind, cluster.name, limits));
    const kube = new RestKube(cluster.rest, { cache, fence: this.fence });
    this.engaged.set(cluster.name, { cluster, informers, kube });
    for (const informer of informers.values()) informer.start();
    log.info({ cluster: cluster.name, informers: informers.size }, "cluster engaged");
  }

  private async disengage(name: string): Promise<void> {
    const engaged = this.engaged.get(name);
    if (!engaged) return;
    this.engaged.delete(name);
    await Promise.all([...engaged.informers.values()].map((i) => i.stop()));
    this.options.log.info({ cluster: name }, "cluster disengaged");
  }
}

/**
 * The synced informers of a cluster as the port's cache. Where a kind is limited to some namespaces,
 * "every namespace" is every namespace of the limit: the per-namespace caches of one selector that
 * cover the whole limit answer it together, and nothing asks the API server for all of them.
 */
function informerCache(
  informers: Map<string, Informer>,
  limitOf: (kind: Kind) => readonly string[] | undefined,
): KubeCache {
  return {
    limitOf,
    caches(kind: Kind, namespace: string): CachedObjects[] {
      const out: CachedObjects[] = [];
      const limit = namespace === "" ? limitOf(kind) : undefined;
      const bySelector = new Map<string, Map<string, Informer>>();
      for (const [id, informer] of informers) {
        const [kindPart, scope = "", labelSelector = ""] = id.split("|");
        if (kindPart !== kindId(kind) || !informer.synced()) continue;
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

/** How much longer than the reconcile timeout a graceful shutdown waits for the passes in flight. */
const DRAIN_SLACK_MS = 5_000;

function kindId(kind: Kind): string {
  return `${kind.group}/${kind.version}/${kind.plural}`;
}

function waitForAbort(signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(true);
    signal.addEventListener("abort", () => resolve(true), { once: true });
  });
}
