import type { Logger } from "pino";
import { Gauge, type Registry } from "prom-client";
import type { Clock, Timer } from "../runtime/base/clock.ts";
import type { Cluster, ClusterSource, ClusterSubscriber } from "../runtime/port/cluster.ts";
import { Informer } from "../runtime/port/informer.ts";
import { KubeRest, type Kind, type KubeObject, type RequestObserver } from "../runtime/port/kube-rest.ts";
import type { StartContext } from "../runtime/process/bootstrap.ts";
import type { runtimeSettings } from "../runtime/process/config.ts";
import { namespacesOutOfReach } from "../runtime/base/secret-reach.ts";
import { clusterSecretLabel, parseClusterSecret } from "./kubeconfig-secret.ts";

// The clusters vhost-broker works on: the management cluster (name "") always, and one target
// cluster per kubeconfig Secret. A Secret added engages its cluster once it answers; a changed one
// re-engages it; a deleted one disengages it. A cluster that does not answer is retried with
// backoff on its own timer, so it never holds up the others.

const secretKind: Kind = { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true };
const retryBaseMs = 1000;
const retryMaxMs = 300_000;

export type ClusterState = "connecting" | "engaged" | "unreachable" | "refused";

export interface ClusterStatus {
  name: string;
  state: ClusterState;
  reason?: string;
  /** Something insecure the settings allow (a kubeconfig that skips TLS verification). */
  warning?: string;
}

interface Entry {
  fingerprint: string;
  status: ClusterStatus;
  cluster?: Cluster;
  retry?: Timer;
  failures: number;
}

export interface ClusterRegistryOptions {
  management: KubeRest;
  secretNamespace: string;
  clock: Clock;
  log: Logger;
  resyncMs: number;
  watchRestartMs: number;
  observeRequests?: RequestObserver;
  /** Checks that a cluster answers; by default GET /version. */
  probe?: (rest: KubeRest) => Promise<void>;
  /** Engage clusters whose kubeconfig skips TLS verification (--allow-insecure-target-clusters). */
  allowInsecure?: boolean;
  /**
   * Why no target cluster is read at all: secretNamespace is outside --secret-namespaces, so its
   * Secrets are out of reach (and listing them would only be refused). Undefined = they are read.
   */
  targetsOff?: string;
}

export class ClusterRegistry implements ClusterSource {
  private readonly options: ClusterRegistryOptions;
  private readonly subscribers: ClusterSubscriber[] = [];
  private readonly entries = new Map<string, Entry>();
  private informer: Informer | undefined;

  constructor(options: ClusterRegistryOptions) {
    this.options = options;
  }

  subscribe(subscriber: ClusterSubscriber): void {
    this.subscribers.push(subscriber);
  }

  statuses(): ClusterStatus[] {
    return [...this.entries.values()].map((e) => e.status);
  }

  async start(): Promise<void> {
    const { management, secretNamespace, clock, log } = this.options;
    const cluster: Cluster = { name: "", rest: management, namespaces: undefined };
    this.entries.set("", { fingerprint: "", status: { name: "", state: "engaged" }, cluster, failures: 0 });
    for (const s of this.subscribers) s.engage(cluster);
    if (this.options.targetsOff) {
      log.warn({ namespace: secretNamespace }, `no target cluster is registered: ${this.options.targetsOff}`);
      return;
    }
    this.informer = new Informer({
      rest: management,
      kind: secretKind,
      namespace: secretNamespace,
      labelSelector: `${clusterSecretLabel}=true`,
      clock,
      log: log.child({ component: "cluster-registry" }),
      resyncMs: this.options.resyncMs,
      watchRestartMs: this.options.watchRestartMs,
    });
    this.informer.addHandler({
      add: (secret) => this.secretChanged(secret),
      update: (_old, secret) => this.secretChanged(secret),
      delete: (secret) => void this.secretDeleted(secret.metadata?.name ?? ""),
    });
    this.informer.start();
  }

  async stop(): Promise<void> {
    await this.informer?.stop();
    this.informer = undefined;
    await Promise.all([...this.entries.keys()].map((name) => this.remove(name, "the registry stopped")));
  }

  /** A cluster Secret was added or changed (the informer calls this; so do unit tests). */
  secretChanged(secret: KubeObject): void {
    const parsed = parseClusterSecret(secret, { allowInsecure: this.options.allowInsecure ?? false });
    const { log } = this.options;
    if (parsed.name === "") return;
    const existing = this.entries.get(parsed.name);
    if (existing?.fingerprint === parsed.fingerprint) return;
    if (existing) void this.remove(parsed.name, "its Secret changed");
    if (!parsed.ok) {
      log.error({ cluster: parsed.name, reason: parsed.reason }, "cluster Secret refused");
      this.entries.set(parsed.name, {
        fingerprint: parsed.fingerprint,
        status: { name: parsed.name, state: "refused", reason: parsed.reason },
        failures: 0,
      });
      return;
    }
    if (parsed.warning) log.warn({ cluster: parsed.name, warning: parsed.warning }, "cluster Secret allowed");
    const rest = new KubeRest(parsed.config, this.options.observeRequests);
    const cluster: Cluster = { name: parsed.name, rest, namespaces: parsed.namespaces };
    const warning = parsed.warning ? { warning: parsed.warning } : {};
    const entry: Entry = {
      fingerprint: parsed.fingerprint,
      status: { name: parsed.name, state: "connecting", ...warning },
      cluster,
      failures: 0,
    };
    this.entries.set(parsed.name, entry);
    void this.connect(entry, cluster);
  }

  private async connect(entry: Entry, cluster: Cluster): Promise<void> {
    const { clock, log } = this.options;
    const probe = this.options.probe ?? ((rest: KubeRest) => rest.request("GET", "/version"));
    try {
      await probe(cluster.rest);
    } catch (error) {
      if (this.entries.get(cluster.name) !== entry) return;
      const delay = Math.min(retryBaseMs * 2 ** entry.failures, retryMaxMs);
      entry.failures++;
      const reason = error instanceof Error ? error.message : String(error);
      entry.status = { ...entry.status, state: "unreachable", reason };
      log.warn(
        { cluster: cluster.name, err: error, retryInMs: delay },
        "target cluster unreachable; will retry",
      );
      entry.retry = clock.setTimer(() => void this.connect(entry, cluster), delay);
      return;
    }
    if (this.entries.get(cluster.name) !== entry) return;
    entry.status = {
      name: cluster.name,
      state: "engaged",
      ...(entry.status.warning ? { warning: entry.status.warning } : {}),
    };
    log.info({ cluster: cluster.name, namespaces: cluster.namespaces }, "target cluster engaged");
    for (const s of this.subscribers) s.engage(cluster);
  }

  /** A cluster Secret was deleted; "" (the management cluster) is never removed this way. */
  async secretDeleted(name: string): Promise<void> {
    if (name !== "") await this.remove(name, "its Secret was deleted");
  }

  private async remove(name: string, why: string): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) return;
    this.entries.delete(name);
    entry.retry?.cancel();
    if (entry.status.state === "engaged") {
      if (name !== "") this.options.log.info({ cluster: name, why }, "target cluster disengaged");
      await Promise.all(this.subscribers.map((s) => s.disengage(name)));
    }
    // A target cluster's connections go with it; the management cluster's client is the program's.
    if (name !== "") await entry.cluster?.rest.close();
  }
}

/** The registry a program's `clusters` step builds from the runtime's settings. */
export function registryFromSettings(
  context: StartContext<typeof runtimeSettings>,
  probe?: ClusterRegistryOptions["probe"],
): ClusterRegistry {
  const { config, management, clock, log, metrics } = context;
  const scoped = config["secret-namespaces"];
  const namespace = config["cluster-secret-namespace"];
  const registry = new ClusterRegistry({
    management,
    secretNamespace: config["cluster-secret-namespace"],
    clock,
    log,
    resyncMs: config["resync-period"],
    watchRestartMs: config["watch-restart-period"],
    observeRequests: (request) => metrics.observeApiRequest(request),
    allowInsecure: config["allow-insecure-target-clusters"],
    ...(namespacesOutOfReach(scoped, [namespace]).length > 0
      ? { targetsOff: `cluster-secret-namespace "${namespace}" is not among secret-namespaces` }
      : {}),
    ...(probe ? { probe } : {}),
  });
  registerClusterStates(metrics.registry, registry);
  return registry;
}

const clusterStates: readonly ClusterState[] = ["connecting", "engaged", "unreachable", "refused"];

/**
 * vhost_broker_cluster_state{cluster,state}: 1 on each registered cluster's current state. A target
 * cluster that is down or refused shows here (and in its orders' conditions), never in readiness.
 */
export function registerClusterStates(registry: Registry, clusters: ClusterRegistry): void {
  new Gauge({
    name: "vhost_broker_cluster_state",
    help: 'The state of each cluster in the registry ("" is the management cluster): 1 on its current state',
    labelNames: ["cluster", "state"],
    registers: [registry],
    collect() {
      this.reset();
      for (const status of clusters.statuses()) {
        for (const state of clusterStates)
          this.set({ cluster: status.name, state }, state === status.state ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: "vhost_broker_cluster_insecure",
    help: "1 for each target cluster engaged without TLS verification (--allow-insecure-target-clusters)",
    labelNames: ["cluster"],
    registers: [registry],
    collect() {
      this.reset();
      for (const status of clusters.statuses()) if (status.warning) this.set({ cluster: status.name }, 1);
    },
  });
}
