import type { Server } from "node:http";
import type { Logger } from "pino";
import { sleep, type Clock } from "../base/clock.ts";
import type { Cluster, ClusterSource } from "../port/cluster.ts";
import type { RuntimeConfig } from "./config.ts";
import { Controller, type Request } from "../loop/controller.ts";
import type { Rank } from "../loop/lanes.ts";
import { PRECEDENCE, RANK_AGE_FLOOR_MS, rankOf } from "./rank.ts";
import { Precedence } from "../loop/precedence.ts";
import type { ControllerSpec } from "./controller-declaration.ts";
import type { CacheIndex } from "../port/object-index.ts";
import type { Kind, KubeObject, KubeRest } from "../port/kube-rest.ts";
import { RestKube } from "../port/rest-kube.ts";
import { LeaderElector } from "../leadership/leader-election.ts";
import { LeaseFence } from "../leadership/lease-fence.ts";
import { openFence, type WriteFence } from "../base/write-fence.ts";
import type { Metrics } from "../loop/metrics.ts";
import { startServers } from "./server.ts";
import { ClusterCaches, registerSyncedGauge } from "./caches.ts";

// Runs controllers on every engaged cluster while this process leads: it builds each controller from
// its declaration (controller-declaration.ts), engages each cluster with its caches (caches.ts), and
// holds the Lease, the probes and the metrics server.

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
  caches: ClusterCaches;
  /** The Kubernetes port on this cluster, reading through its caches. */
  kube: RestKube;
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
  /** Urgent passes of any controller hold back the routine passes of all (precedence.ts). */
  private readonly precedence: Precedence;

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
    registerSyncedGauge(options.metrics.registry, this.engaged);
    this.precedence = new Precedence(options.clock, PRECEDENCE);
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
          ? {
              exists: (r: Request) => own.some((k) => this.cached(r.cluster, k, r.namespace, r.name)),
              rank: {
                of: (r: Request) => this.rank(spec, own, r),
                ageFloorMs: RANK_AGE_FLOOR_MS,
                precedence: this.precedence,
              },
            }
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
    return this.engaged.get(cluster)?.caches.get(kind, namespace, name);
  }

  /** How soon a request's pass is needed, from its cached object (rank.ts). */
  private rank(spec: ControllerSpec, own: Kind[], r: Request): Rank {
    const object = this.ownObject(own, r);
    return rankOf(object, object !== undefined && spec.due?.(object, this.options.clock.now()) === true);
  }

  /** The object of a request among a controller's own kinds, from the caches. */
  private ownObject(own: Kind[], r: Request): KubeObject | undefined {
    for (const kind of own) {
      const object = this.cached(r.cluster, kind, r.namespace, r.name);
      if (object) return object;
    }
    return undefined;
  }

  /** A pass of `request` by the controller `name` at once (a backend found what its objects must redo). */
  enqueue(name: string, request: Request): void {
    this.controllers.get(name)?.enqueue(request);
  }

  /** Every cached object of `kind` on `cluster`, across the informers that hold that kind. */
  cachedList(cluster: string, kind: Kind): KubeObject[] {
    return this.engaged.get(cluster)?.caches.list(kind) ?? [];
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
    return this.engaged.get(cluster)?.caches.byIndex(kind, index, namespace, value) ?? [];
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
    return management.caches.syncedWhereServed()
      ? { ready: true }
      : { ready: false, why: "the management cluster's caches are not synced" };
  }

  /** Whether every cache on `cluster` has synced (for the metrics). */
  synced(cluster: string): boolean {
    return this.engaged.get(cluster)?.caches.synced() ?? true;
  }

  async startServers(): Promise<void> {
    const { config, metrics, log, management } = this.options;
    const ready = () => this.ready();
    this.servers.push(
      ...(await startServers({ config, registry: metrics.registry, log, management, ready })),
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
    const caches = new ClusterCaches(cluster, this.specs, this.controllers, { config, clock, log, metrics });
    const kube = new RestKube(cluster.rest, { cache: caches.forPort(), fence: this.fence });
    this.engaged.set(cluster.name, { cluster, caches, kube });
    caches.start();
    log.info({ cluster: cluster.name, informers: caches.size }, "cluster engaged");
  }

  private async disengage(name: string): Promise<void> {
    const engaged = this.engaged.get(name);
    if (!engaged) return;
    this.engaged.delete(name);
    await engaged.caches.stop();
    this.options.log.info({ cluster: name }, "cluster disengaged");
  }
}

/** How much longer than the reconcile timeout a graceful shutdown waits for the passes in flight. */
const DRAIN_SLACK_MS = 5_000;

function waitForAbort(signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(true);
    signal.addEventListener("abort", () => resolve(true), { once: true });
  });
}
