// The state a chaos run (chaos.ts) shares between its faults (chaos-faults.ts) and its tracking and
// checks (chaos-checks.ts): the run's log, its orders and replicas, the world they live in and its two
// buses, what the faults did and when, and what the checks found; plus the waits they all use.
import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RabbitMQVhost } from "../../src/api/index.ts";
import type { OrderKey } from "../../src/orders/core/naming.ts";
import { localEnv } from "../world/env.ts";
import type { TestCluster } from "../world/kube.ts";
import type { LocalBroker } from "../world/managed-bus.ts";
import type { LocalNode as ResetNode } from "../world/emptied-broker.ts";
import type { LocalPart } from "../world/local-brokers.ts";
import type { LoginProber } from "../probes/login-prober.ts";
import type { ChaosConfig, LeaderFault, Outage } from "./chaos-plan.ts";
import type { ChaosReport } from "./chaos-report.ts";
import type { Span, StatusTrack } from "./chaos-overlap.ts";
import { ReplicaPair } from "../operator/replica-pair.ts";
import type { TcpProxy } from "../world/tcp-proxy.ts";
import { steppableClockEnv } from "./wall-clock.ts";
import { readOrder, type TargetWorld } from "../world/target-cluster.ts";

export interface ChaosOrder {
  name: string;
  key: OrderKey;
  cluster: TestCluster;
  retain: boolean;
  prober?: LoginProber;
}

/**
 * One of the run's buses (chaos-bus.ts): a RabbitmqCluster in the ControlPlanes' namespace standing in
 * for a broker of the local environment.
 */
export interface ChaosBus {
  /** The RabbitmqCluster's name. */
  name: string;
  /** The broker's part for `scripts/localenv.sh stop`, and its node for resetBroker. */
  part: LocalPart;
  node: ResetNode;
  /** Its own addresses and administrator, as the run reaches it. */
  broker: LocalBroker;
  /** The operator's way to its management API (the RabbitmqCluster's connection annotation). */
  proxy: TcpProxy;
}

/**
 * The ControlPlane the management-cluster orders name, the one a bus change moves; the world's own
 * (`cp`) keeps the target-cluster orders on the world's bus (chaos-bus.ts says why).
 */
export const MOVING_CONTROL_PLANE = "cp-management";

/** The world with `bus` as its broker: what brokerApi and checkRetained ask. */
export const onBus = (w: TargetWorld, bus: ChaosBus): TargetWorld => ({ ...w, broker: bus.broker });

/** An emptied broker: when it was reset, when every delivered user was back (or the bound passed), the refusals meanwhile. */
export interface EmptiedWindow {
  start: number;
  end?: number;
  /** ms from the broker back (empty, its administrator made again) until every delivered user was on it. */
  recoveredMs?: number;
  refusals: number;
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** Polls `check` (errors count as not yet) until it holds, or throws after `timeoutMs`. */
export async function waitUntil(
  what: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`, { cause: lastError });
    await sleep(1_000, signal);
  }
}

export function isReady(o: RabbitMQVhost | undefined): boolean {
  return o?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

const localenvScript = fileURLToPath(new URL("../../scripts/localenv.sh", import.meta.url));

export class ChaosRun {
  readonly config: ChaosConfig;
  readonly workdir: string;
  readonly signal: AbortSignal | undefined;
  readonly runLog: string;
  readonly failures: string[] = [];
  readonly authFailures: string[] = [];
  readonly outages: Record<Outage, number> = {
    rabbitmq: 0,
    openbao: 0,
    "management-apiserver": 0,
    etcd: 0,
    "target-apiserver": 0,
    "broker-unanswering": 0,
    partition: 0,
    endpoint: 0,
    "status-wipe": 0,
    "stalled-delivery": 0,
    "clock-step": 0,
    "emptied-broker": 0,
    "lost-live-user": 0,
    "bus-change": 0,
  };
  readonly leaderFaults: Record<LeaderFault, number> = { kill: 0, pause: 0, term: 0 };
  /** The clock-steps done, each with what the leader's Lease showed of it. */
  readonly clockSteps: ChaosReport["clockSteps"] = [];
  /** Graces (from the successor seen live until the predecessor seen swept), per order. */
  readonly graces: (Span & { order: string })[] = [];
  /** Every fault's span, for the rotations and sweeps under way during one. */
  readonly faultSpans: Span[] = [];
  readonly tracks = new Map<string, StatusTrack>();
  /** Leading replicas seen at once, at most (must stay 1). */
  mostLeaders = 0;
  /** Fault windows in progress, and when the last one ended: other failures near them are expected. */
  activeFaults = 0;
  lastFaultEnd = 0;
  otherOutsideFaults = 0;
  readonly stopped = new Set<string>();
  withdrawn = false;
  /**
   * The emptied broker's windows, from its reset until every order's delivered user was back on it (or
   * the bound): a refusal meanwhile is expected, and counted apart (`refusedWhileEmptied`, and per window).
   */
  readonly emptiedWindows: EmptiedWindow[] = [];
  refusedWhileEmptied = 0;
  /** Each lost live User: the order, its generation, and how long after the loss a successor was delivered. */
  readonly lostLiveUsers: ChaosReport["lostLiveUsers"] = [];
  /** Each bus change: from and to which bus, and ms from the change until every order had moved. */
  readonly busChanges: ChaosReport["busChanges"] = [];
  /** Checks that follow a fault past its end (a lost live User's successor); awaited before the run's checks. */
  readonly pending: Promise<void>[] = [];
  /** Set when the run ends, whatever happened: the pending checks stop. */
  finished = false;

  world: TargetWorld | undefined;
  /** The world's bus first, then the other one; MOVING_CONTROL_PLANE names `buses[moved]`. */
  readonly buses: ChaosBus[] = [];
  moved = 0;
  readonly orders: ChaosOrder[] = [];
  readonly leaseName: string;
  readonly replicas: ReplicaPair;
  private readonly env = localEnv();

  constructor(config: ChaosConfig) {
    this.config = config;
    this.workdir = config.workdir;
    this.signal = config.signal;
    mkdirSync(this.workdir, { recursive: true });
    this.runLog = `${this.workdir}/chaos.log`;
    this.leaseName = `vb-chaos-${config.seed}-${Date.now().toString(36)}`;
    this.replicas = new ReplicaPair({
      lease: this.leaseName,
      workdir: this.workdir,
      // Every replica's wall clock can be stepped through a file in its slot's folder (+0 at each start).
      options: (slot) => ({
        clusterSecretNamespace: this.world?.secretNs ?? "",
        keepLogs: false,
        env: steppableClockEnv(this.offsetFile(slot)),
      }),
      log: this.log,
    });
  }

  readonly log = (line: string) => {
    const stamped = `${new Date().toISOString()} ${line}`;
    appendFileSync(this.runLog, stamped + "\n");
    this.config.log?.(stamped);
  };

  /**
   * localenv.sh in the environment's state folder (its own working directory, one that outlives this
   * run), its output appended to the run's log.
   */
  localenv(...args: string[]): Promise<void> {
    const env = this.env;
    return new Promise<void>((resolve, reject) => {
      const child = spawn("bash", [localenvScript, ...args], {
        cwd: env.LOCALENV_STATE,
        env: { ...process.env, LOCALENV_STATE: env.LOCALENV_STATE },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const out = (chunk: Buffer) => appendFileSync(`${this.workdir}/localenv.log`, chunk);
      child.stdout.on("data", out);
      child.stderr.on("data", out);
      child.once("error", reject);
      child.once("exit", (code) =>
        code === 0 ? resolve() : reject(new Error(`localenv.sh ${args.join(" ")} exited with ${code}`)),
      );
    });
  }

  /**
   * The emptied broker's window a refusal now falls in, if any: one of its windows is open, or closed less than 2 s ago (a probe
   * refused just before the broker was seen holding every delivered user again, reported just after).
   */
  emptiedWindowAt(now = Date.now()): EmptiedWindow | undefined {
    return this.emptiedWindows.find((w) => now >= w.start && (w.end === undefined || now <= w.end + 2_000));
  }

  offsetFile(slot: number): string {
    return join(this.workdir, `replica-${slot}`, "wall-clock-offset");
  }

  endpoint(): string {
    return `127.0.0.1:${this.world?.broker.amqpPort ?? 0}`;
  }

  /** The bus the management-cluster orders are on (or moving to). */
  get bus(): ChaosBus {
    const bus = this.buses[this.moved];
    if (!bus) throw new Error("the run's buses are not set up");
    return bus;
  }

  /** The bus an order is on: the world's for a target-cluster order, the moving one's otherwise. */
  busOf(o: ChaosOrder): ChaosBus {
    const bus = o.key.cluster ? this.buses[0] : this.bus;
    if (!bus) throw new Error("the run's buses are not set up");
    return bus;
  }

  orderSpec(o: ChaosOrder | undefined) {
    return {
      ...(o?.key.cluster === ""
        ? { controlPlaneRef: { name: MOVING_CONTROL_PLANE, namespace: this.world?.cpNs ?? "" } }
        : {}),
      rotation: { interval: this.config.interval, gracePeriod: this.config.grace },
      deletionPolicy: o?.retain ? "Retain" : "Delete",
    };
  }

  /** The order the order-level faults hit: one on the management cluster, chosen by the seed. */
  managementOrder(): ChaosOrder {
    const candidates = this.orders.filter((o) => o.key.cluster === "");
    const o = candidates[this.config.seed % candidates.length];
    if (!o) throw new Error("an order-level fault needs an order on the management cluster");
    return o;
  }

  readOrderOf(o: ChaosOrder): Promise<RabbitMQVhost | undefined> {
    return readOrder(o.cluster, o.key.namespace, o.name);
  }
}
