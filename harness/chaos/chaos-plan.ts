// The chaos run's configuration, and its faults planned from a seed alone, so that a run can be
// replayed: which fault, when, for how long, and whether the leader is also killed in the middle.
export type FaultKind =
  /** The leader SIGKILLed; its slot started again after a pause. */
  | "kill"
  /** The leader SIGSTOPped for longer than its Lease, then resumed: it must write nothing and exit. */
  | "pause"
  /** The leader SIGTERMed: it drains its passes, releases the Lease and exits; its slot starts again. */
  | "term"
  | "rabbitmq"
  | "openbao"
  | "management-apiserver"
  /** etcd stopped with both API servers up: every API request fails, the leader's Lease lapses. */
  | "etcd"
  /** The engaged target cluster's API server stopped. */
  | "target-apiserver"
  /** The broker's management API, as the operator reaches it, accepts TCP and never answers. */
  | "broker-unanswering"
  /** The operator cut off from the broker's management API (connections refused); consumers still reach the broker. */
  | "partition"
  | "endpoint"
  /** A management-cluster order's status removed, as a restore without status leaves it. */
  | "status-wipe"
  /** A management-cluster order's delivered Secret refused every update, its successor's User deleted meanwhile. */
  | "stalled-delivery"
  /**
   * The leader's wall clock stepped (libfaketime) by `stepS` for the fault's length, then back; its
   * monotonic clock runs on. It must keep its Lease throughout.
   */
  | "clock-step"
  /**
   * The run's broker reset (`force_reset`) and its administrator made again, as a lost volume leaves it:
   * logins are refused until the operator declares every object again, within a bound.
   */
  | "emptied-broker"
  /**
   * During an order's grace period, its live generation's User child deleted with its finalizer stripped
   * (the leader frozen meanwhile): the delivered user stays and is replaced by a successor after the grace.
   */
  | "lost-live-user"
  /**
   * The management-cluster orders' ControlPlane pointed at the run's other bus (chaos-bus.ts): its span
   * lasts until every one of them is delivered on it with no migration under way, within a bound.
   */
  | "bus-change";

/** The faults that hit the leading replica. */
export const LEADER_FAULTS = ["kill", "pause", "term"] as const;
export type LeaderFault = (typeof LEADER_FAULTS)[number];
export type Outage = Exclude<FaultKind, LeaderFault>;

export interface ChaosConfig {
  /** The PRNG's seed; the same seed and configuration give the same plan. */
  seed: number;
  /** Orders in all; the first `targetOrders` live on the target cluster, the rest on the management one. */
  orders: number;
  targetOrders: number;
  /** The rotation schedule of every order. */
  interval: string;
  grace: string;
  /** How long faults are injected (the plan spreads them over this window). */
  faultWindowMs: number;
  /** Planned faults of the leader of each kind (a kill in the middle of an outage comes on top). */
  leaderFaults: Record<LeaderFault, number>;
  /** Outages of each kind. */
  outages: Record<Outage, number>;
  /**
   * How long a stopped part stays stopped, and how long the endpoint stays withdrawn or a delivery
   * stalled: [min, max] ms.
   */
  outageMs: [number, number];
  withdrawMs: [number, number];
  /** How long a paused leader stays paused: [min, max] ms, longer than the Lease (15 s). */
  pauseMs: [number, number];
  /**
   * The leader's wall-clock steps: how long one lasts ([min, max] ms), and the offsets in seconds the
   * steps take in turn (negative: back).
   */
  clockStep: { ms: [number, number]; seconds: number[] };
  /** Chance that the operator is also killed in the middle of an outage (not of the apiserver's). */
  killDuringOutage: number;
  /** Figures the run must reach (the full run's promise: 150 rotations, 20 leader faults). */
  minRotations: number;
  minLeaderFaults: number;
  /** Rotations and sweeps under way while a fault lasts, at least (targeted faults make up for chance). */
  minOverlaps: { rotation: number; sweep: number };
  /** Where the run's logs go (the operator's, localenv's, the run's own). */
  workdir: string;
  /** Progress lines. */
  log?: (line: string) => void;
  signal?: AbortSignal;
}

export const FULL: Omit<ChaosConfig, "seed" | "workdir"> = {
  // A rotation takes about 1.6 minutes under these faults (8 per order in 13 minutes), so 20 orders
  // for the 150 rotations.
  orders: 20,
  targetOrders: 3,
  interval: "1m",
  grace: "20s",
  faultWindowMs: 13 * 60_000,
  leaderFaults: { kill: 12, pause: 6, term: 4 },
  outages: {
    rabbitmq: 2,
    openbao: 2,
    "management-apiserver": 2,
    etcd: 2,
    "target-apiserver": 2,
    "broker-unanswering": 2,
    partition: 2,
    endpoint: 2,
    "status-wipe": 2,
    "stalled-delivery": 2,
    "clock-step": 2,
    "emptied-broker": 2,
    "lost-live-user": 2,
    // There and back: the second one moves the orders home.
    "bus-change": 2,
  },
  outageMs: [8_000, 25_000],
  withdrawMs: [30_000, 75_000],
  pauseMs: [20_000, 30_000],
  // Five minutes back, then five minutes forward: each longer than the Lease, the grace and the interval.
  clockStep: { ms: [20_000, 40_000], seconds: [-300, 300] },
  killDuringOutage: 0.5,
  minRotations: 150,
  minLeaderFaults: 20,
  minOverlaps: { rotation: 10, sweep: 10 },
};

export const SHORT: Omit<ChaosConfig, "seed" | "workdir"> = {
  orders: 2,
  targetOrders: 1,
  interval: "1m",
  grace: "20s",
  faultWindowMs: 150_000,
  leaderFaults: { kill: 1, pause: 1, term: 1 },
  outages: {
    rabbitmq: 1,
    openbao: 1,
    "management-apiserver": 1,
    etcd: 1,
    "target-apiserver": 1,
    "broker-unanswering": 1,
    partition: 1,
    endpoint: 1,
    "status-wipe": 1,
    "stalled-delivery": 1,
    "clock-step": 1,
    // A reset broker is down and refusing for 20 to 30 s (the reset, the operator's broker check every
    // 15 s, the declarations): more than the short variant can spare. The full run has it.
    "emptied-broker": 0,
    "lost-live-user": 1,
    "bus-change": 1,
  },
  outageMs: [5_000, 10_000],
  withdrawMs: [20_000, 35_000],
  pauseMs: [20_000, 25_000],
  // Back only: a step forward stamps the schedule minutes ahead, past the end of this short run.
  clockStep: { ms: [10_000, 12_000], seconds: [-300] },
  killDuringOutage: 0.5,
  minRotations: 2,
  minLeaderFaults: 3,
  minOverlaps: { rotation: 1, sweep: 1 },
};

/** mulberry32: a small seedable PRNG, enough to replay a plan. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface PlannedFault {
  kind: FaultKind;
  /** Offset from the start of the fault window. */
  atMs: number;
  /** How long the fault lasts (an outage, a withdrawal, a pause), or the wait before the restart (a kill). */
  durationMs: number;
  /** For an outage: a kill of the leader this far into it, if any. */
  killAtMs?: number;
  /** For a clock-step: the leader's wall clock this many seconds off the real one. */
  stepS?: number;
}

/** Bus changes draw from a stream of their own (the seed's, salted with this), after every other kind. */
const BUS_CHANGE_SALT = 0x62757321;

/**
 * The faults of a run, from its seed alone. The kinds are drawn in the order of `outages`, the
 * clock-step, the emptied broker and the lost live User last: the faults of a seed from before they came
 * are the same, with them added. The emptied broker and the lost live User draw their offset only: the
 * one lasts until the operator has declared everything again, the other is a moment. The bus changes draw
 * from their own stream, so a seed's other faults are exactly those it drew before they came; each lasts
 * until the orders have moved, and may carry a kill within `outageMs[1]` of the change.
 */
export function plan(config: Omit<ChaosConfig, "workdir">): PlannedFault[] {
  const random = prng(config.seed);
  const between = ([min, max]: [number, number]) => Math.round(min + random() * (max - min));
  const faults: PlannedFault[] = [];
  const window = config.faultWindowMs;
  for (const kind of LEADER_FAULTS) {
    for (let i = 0; i < config.leaderFaults[kind]; i++) {
      const durationMs =
        kind === "kill" ? between([0, 3_000]) : kind === "pause" ? between(config.pauseMs) : 0;
      faults.push({ kind, atMs: Math.round(random() * window * 0.9), durationMs });
    }
  }
  for (const [kind, count] of Object.entries(config.outages) as [Outage, number][]) {
    if ((kind === "endpoint" || kind === "target-apiserver") && config.targetOrders === 0) continue;
    if (kind === "bus-change") continue;
    for (let i = 0; i < count; i++) {
      const durationMs =
        kind === "status-wipe" || kind === "emptied-broker" || kind === "lost-live-user"
          ? 0
          : between(
              kind === "clock-step"
                ? config.clockStep.ms
                : kind === "endpoint" || kind === "stalled-delivery"
                  ? config.withdrawMs
                  : config.outageMs,
            );
      const atMs = Math.round(random() * Math.max(0, window * 0.9 - durationMs));
      // No kill while the management cluster cannot answer: the new leader could not start its caches;
      // none during a clock-step, whose leader must keep leading; none in a broker's recovery, which the run
      // bounds, nor in a lost live User's freeze.
      const kill =
        kind !== "management-apiserver" &&
        kind !== "etcd" &&
        kind !== "status-wipe" &&
        kind !== "clock-step" &&
        kind !== "emptied-broker" &&
        kind !== "lost-live-user" &&
        random() < config.killDuringOutage;
      const stepS = config.clockStep.seconds[i % config.clockStep.seconds.length];
      faults.push({
        kind,
        atMs,
        durationMs,
        ...(kill ? { killAtMs: Math.round(random() * durationMs) } : {}),
        ...(kind === "clock-step" && stepS !== undefined ? { stepS } : {}),
      });
    }
  }
  const own = prng(config.seed ^ BUS_CHANGE_SALT);
  for (let i = 0; i < config.outages["bus-change"]; i++) {
    const atMs = Math.round(own() * window * 0.9);
    const kill = own() < config.killDuringOutage;
    faults.push({
      kind: "bus-change",
      atMs,
      durationMs: 0,
      ...(kill ? { killAtMs: Math.round(own() * config.outageMs[1]) } : {}),
    });
  }
  return faults.sort((a, b) => a.atMs - b.atMs);
}
