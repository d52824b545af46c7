// What a platform team asks of the operator beyond the controller loop: each order's and each topology
// and SQL object's Ready condition (as cert-manager's certmanager_certificate_ready_status: one series per
// condition value, 1 on the current one), each order's next rotation, rotations completed and
// refused, backup writes and failures, and how long OpenBao and broker requests take. The per-object
// series are read from the informer caches at scrape time, so they cost nothing between scrapes and
// vanish with their objects; their cardinality is that of the objects (three series each), so very
// large installations may drop the Ready gauges (DomainMetricsOptions.readyStatus).
import { Counter, Gauge, Histogram, type GaugeConfiguration, type Registry } from "prom-client";
import type { KindRef } from "../api/index.ts";
import type { SweepHoldReport } from "../orders/core/deps.ts";
import type { OrderKey } from "../orders/core/naming.ts";
import type { Kind, KubeObject } from "../runtime/port/kube-rest.ts";
import type { Manager } from "../runtime/process/manager.ts";
import { topologyFinalizer } from "../rabbitmq/finalizer.ts";

const conditionValues = ["True", "False", "Unknown"] as const;
const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface Status {
  conditions?: { type?: string; status?: string }[];
  nextRotation?: string;
  backend?: string;
  migration?: { phase?: string };
}

const statusOf = (o: KubeObject) => (o["status"] ?? {}) as Status;

interface Series<T extends string> {
  labels: Partial<Record<T, string>>;
  value: number;
}

/**
 * A gauge whose series are read from the caches at each scrape, straight into the answer: none is
 * kept between scrapes, nor set one by one (a set hashes its labels; 30,000 objects are 90,000 series).
 */
class CacheGauge<T extends string> extends Gauge<T> {
  readonly #series: () => Iterable<Series<T>>;

  constructor(config: GaugeConfiguration<T>, series: () => Iterable<Series<T>>) {
    super(config);
    this.#series = series;
  }

  override async get() {
    return { ...(await super.get()), values: [...this.#series()] };
  }
}

function readyValue(object: KubeObject): (typeof conditionValues)[number] {
  const status = statusOf(object).conditions?.find((c) => c.type === "Ready")?.status;
  return status === "True" || status === "False" ? status : "Unknown";
}

/** One series per condition value, 1 on the current one. */
function* readySeries(labels: Record<string, string>, object: KubeObject): Generator<Series<string>> {
  const current = readyValue(object);
  for (const condition of conditionValues) {
    yield { labels: { ...labels, condition }, value: condition === current ? 1 : 0 };
  }
}

/** The kinds of a built-in controller, and which of their cached objects it serves. */
export interface ServedKinds {
  kinds: readonly (Kind & KindRef)[];
  serves(kind: KindRef, object: KubeObject): boolean;
}

export interface WatchedKinds {
  orders: readonly Kind[];
  topology: readonly (Kind & KindRef)[];
  /** The SQL kinds; none when the built-in SQL controller is off. */
  sql?: ServedKinds;
}

/** An object the built-in topology controller does not serve carries no finalizer (and no status) of ours. */
const topologyServes = (kind: KindRef, object: KubeObject) =>
  (object.metadata?.finalizers ?? []).includes(topologyFinalizer(kind));

/**
 * The Ready condition of each object a built-in controller serves, one series per condition value, as
 * the orders' gauge has it.
 */
function readyGauge(
  registers: Registry[],
  manager: Manager,
  name: string,
  help: string,
  served: ServedKinds,
): void {
  new CacheGauge(
    { name, help, labelNames: ["kind", "namespace", "name", "condition"], registers },
    function* () {
      for (const kind of served.kinds) {
        for (const object of manager.cachedList("", kind)) {
          if (served.serves(kind, object)) yield* readySeries({ kind: kind.kind, ...nameOf(object) }, object);
        }
      }
    },
  );
}

export interface DomainMetricsOptions {
  /** The per-object Ready gauges (default true): false leaves them out, 90,000 series at 30,000 objects. */
  readyStatus?: boolean;
}

export class DomainMetrics {
  readonly rotations: Counter<"kind" | "result">;
  readonly backupWrites: Counter;
  readonly backupFailures: Counter<"operation">;
  readonly backendLatency: Histogram<"backend" | "operation">;
  /** Set while an order's sweep waits for a superseded user's last consumer; the series goes with it. */
  readonly sweepHeld: Gauge<"kind" | "cluster" | "namespace" | "name">;

  constructor(registry: Registry, manager: Manager, kinds: WatchedKinds, options: DomainMetricsOptions = {}) {
    const registers = [registry];
    if (options.readyStatus !== false) readyGauges(registers, manager, kinds);
    new CacheGauge(
      {
        name: "vhost_broker_order_next_rotation_timestamp_seconds",
        help: "When each order's next password rotation is due (status.nextRotation), as a Unix time",
        labelNames: ["kind", "cluster", "namespace", "name"],
        registers,
      },
      function* () {
        for (const kind of kinds.orders) {
          for (const cluster of manager.engagedClusters()) {
            for (const order of manager.cachedList(cluster, kind)) {
              const next = Date.parse(statusOf(order).nextRotation ?? "");
              if (Number.isFinite(next))
                yield { labels: { kind: kind.kind, cluster, ...nameOf(order) }, value: next / 1000 };
            }
          }
        }
      },
    );
    new CacheGauge(
      {
        name: "vhost_broker_orders_per_backend",
        help: "Orders by the backend their delivered user is on (status.backend: a RabbitmqCluster, a MariaDB) and the phase of a migration under way (None when there is none)",
        labelNames: ["kind", "backend", "migration"],
        registers,
      },
      function* () {
        for (const kind of kinds.orders) {
          const counts = new Map<string, { backend: string; migration: string; value: number }>();
          for (const cluster of manager.engagedClusters()) {
            for (const order of manager.cachedList(cluster, kind)) {
              const { backend, migration } = statusOf(order);
              if (backend === undefined) continue;
              const phase = migration?.phase ?? "None";
              const key = `${backend}/${phase}`;
              const entry = counts.get(key) ?? { backend, migration: phase, value: 0 };
              entry.value += 1;
              counts.set(key, entry);
            }
          }
          for (const { backend, migration, value } of counts.values())
            yield { labels: { kind: kind.kind, backend, migration }, value };
        }
      },
    );
    this.rotations = new Counter({
      name: "vhost_broker_rotations_total",
      help: "Password rotations: completed (the delivered user switched to its successor) and refused (the successor failed its check)",
      labelNames: ["kind", "result"],
      registers,
    });
    this.backupWrites = new Counter({
      name: "vhost_broker_backup_writes_total",
      help: "Credentials written to OpenBao (new versions)",
      registers,
    });
    this.backupFailures = new Counter({
      name: "vhost_broker_backup_failures_total",
      help: "OpenBao calls that failed, or health checks that found it unusable, by operation",
      labelNames: ["operation"],
      registers,
    });
    this.backendLatency = new Histogram({
      name: "vhost_broker_backend_request_duration_seconds",
      help: "Latency of requests to OpenBao and to the brokers' management API, failures included",
      labelNames: ["backend", "operation"],
      buckets: latencyBuckets,
      registers,
    });
    this.sweepHeld = new Gauge({
      name: "vhost_broker_order_sweep_held_connections",
      help: "Connections that still use an order's superseded user past its grace period, holding its sweep (NaN: the backend cannot tell); present only while held",
      labelNames: ["kind", "cluster", "namespace", "name"],
      registers,
    });
    for (const kind of kinds.orders) {
      for (const result of ["completed", "refused"]) this.rotations.inc({ kind: kind.kind, result }, 0);
    }
    this.backupWrites.inc(0);
  }
}

/** The Ready condition of each order, and of each topology and SQL object a built-in controller serves. */
function readyGauges(registers: Registry[], manager: Manager, kinds: WatchedKinds): void {
  new CacheGauge(
    {
      name: "vhost_broker_order_ready_status",
      help: "The Ready condition of each order: 1 on the condition's current value, 0 on the others",
      labelNames: ["kind", "cluster", "namespace", "name", "condition"],
      registers,
    },
    function* () {
      for (const kind of kinds.orders) {
        for (const cluster of manager.engagedClusters()) {
          for (const order of manager.cachedList(cluster, kind)) {
            yield* readySeries({ kind: kind.kind, cluster, ...nameOf(order) }, order);
          }
        }
      }
    },
  );
  readyGauge(
    registers,
    manager,
    "vhost_broker_topology_ready_status",
    "The Ready condition of each rabbitmq.com object the built-in topology controller serves: 1 on its current value",
    { kinds: kinds.topology, serves: topologyServes },
  );
  readyGauge(
    registers,
    manager,
    "vhost_broker_sql_ready_status",
    "The Ready condition of each mariadb.osh.openstack.org object the built-in SQL controller serves: 1 on its current value",
    kinds.sql ?? { kinds: [], serves: () => false },
  );
}

/** The held-sweep report of one order kind's passes, into the gauge. */
export function sweepHoldReport(metrics: DomainMetrics, kind: string): SweepHoldReport {
  return {
    held(order: OrderKey, connections: number | undefined) {
      const labels = { kind, cluster: order.cluster, namespace: order.namespace, name: order.name };
      if (connections === undefined) metrics.sweepHeld.remove(labels);
      else metrics.sweepHeld.set(labels, connections);
    },
  };
}

function nameOf(o: KubeObject): { namespace: string; name: string } {
  return { namespace: o.metadata?.namespace ?? "", name: o.metadata?.name ?? "" };
}
