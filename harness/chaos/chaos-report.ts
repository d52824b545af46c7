// What a chaos run found, and the table it prints.
import type { ProberCounts } from "../probes/login-prober.ts";
import type { ChaosConfig, LeaderFault, Outage } from "./chaos-plan.ts";

export interface OrderFigures {
  order: string;
  cluster: string;
  generation: number;
  rotations: number;
  prober: ProberCounts;
}

export interface ChaosReport {
  seed: number;
  config: Omit<ChaosConfig, "log" | "signal">;
  rotations: number;
  leaderFaults: Record<LeaderFault, number>;
  outages: Record<Outage, number>;
  /** Rotations and sweeps under way while a fault lasted. */
  overlaps: { rotation: number; sweep: number };
  /** Replicas that ended by themselves (a Lease lost in an outage), and the most that led at once. */
  replicas: { ownExits: string[]; mostLeaders: number };
  /** The leader's wall-clock steps: the offset, how far off its Lease's renewTime was seen, whether it led throughout. */
  clockSteps: { seconds: number; leaseSkewMs: number | undefined; keptLease: boolean }[];
  /** Graces cut short next to a clock-step (the status's deadlines are wall-clock times). */
  shortGraces: string[];
  /** Each emptied broker: ms from its coming back empty until every delivered user was back (undefined: not within the bound). */
  emptiedBrokers: { recoveredMs: number | undefined; refusals: number }[];
  /** Each lost live User: the order, the lost generation, ms from the loss until a successor was delivered. */
  lostLiveUsers: { order: string; generation: number; replacedMs: number | undefined }[];
  /** Each bus change: from and to which bus, ms from the change until every order had moved (undefined: not within the bound). */
  busChanges: { from: string; to: string; movedMs: number | undefined }[];
  /**
   * authFailed: refusals outside an emptied broker's window (each fails the run); refusedWhileEmptied:
   * those inside one (expected until the operator has declared every object again).
   */
  logins: {
    ok: number;
    authFailed: number;
    refusedWhileEmptied: number;
    other: number;
    otherOutsideFaults: number;
  };
  durationMs: number;
  orders: OrderFigures[];
  /** Every check that failed, with what it found; empty when the run kept the promise. */
  failures: string[];
  /** Auth failures as they happened (time, order, username, message). */
  authFailures: string[];
  workdir: string;
  operatorLog: string;
}

/** The figures as one table, and the failed checks under it. */
export function formatReport(r: ChaosReport): string {
  const rows: [string, string][] = [
    ["seed", String(r.seed)],
    [
      "orders",
      `${r.orders.length} (${r.config.targetOrders} on the target cluster), interval ${r.config.interval}, grace ${r.config.grace}`,
    ],
    [
      "replicas",
      `2 throughout; ${r.replicas.ownExits.length} ended by themselves and started again; at most ${r.replicas.mostLeaders} led at once`,
    ],
    ["rotations", String(r.rotations)],
    ["rotations / sweeps under way during a fault", `${r.overlaps.rotation} / ${r.overlaps.sweep}`],
    ["leader kills (SIGKILL)", String(r.leaderFaults.kill)],
    ["leader pauses past the Lease (SIGSTOP)", String(r.leaderFaults.pause)],
    ["leader stops (SIGTERM, drained)", String(r.leaderFaults.term)],
    ["rabbitmq outages", String(r.outages.rabbitmq)],
    ["openbao outages", String(r.outages.openbao)],
    ["management-apiserver outages", String(r.outages["management-apiserver"])],
    ["etcd outages (API servers up)", String(r.outages.etcd)],
    ["target-apiserver outages", String(r.outages["target-apiserver"])],
    ["management API unanswering (TCP accepted)", String(r.outages["broker-unanswering"])],
    ["operator cut off from the management API", String(r.outages.partition)],
    ["endpoint withdrawals", String(r.outages.endpoint)],
    ["status wipes", String(r.outages["status-wipe"])],
    ["stalled deliveries with a lost successor User", String(r.outages["stalled-delivery"])],
    [
      "leader wall-clock steps (libfaketime)",
      `${r.outages["clock-step"]}` +
        (r.clockSteps.length
          ? ` (${r.clockSteps
              .map(
                (c) =>
                  `${c.seconds > 0 ? "+" : ""}${c.seconds} s: renewTime ${c.leaseSkewMs === undefined ? "unread" : `${(c.leaseSkewMs / 1000).toFixed(0)} s`} off, Lease ${c.keptLease ? "kept" : "LOST"}`,
              )
              .join("; ")})`
          : ""),
    ],
    [
      "brokers restarted empty (force_reset)",
      `${r.outages["emptied-broker"]}` +
        (r.emptiedBrokers.length
          ? ` (${r.emptiedBrokers
              .map(
                (e) =>
                  `every delivered user back ${e.recoveredMs === undefined ? "NOT within the bound" : `after ${(e.recoveredMs / 1000).toFixed(1)} s`}, ${e.refusals} refused meanwhile`,
              )
              .join("; ")})`
          : ""),
    ],
    [
      "live Users lost in a grace (finalizer stripped)",
      `${r.outages["lost-live-user"]}` +
        (r.lostLiveUsers.length
          ? ` (${r.lostLiveUsers
              .map(
                (l) =>
                  `${l.order} v${l.generation}: ${l.replacedMs === undefined ? "NOT replaced" : `successor delivered after ${(l.replacedMs / 1000).toFixed(0)} s`}`,
              )
              .join("; ")})`
          : ""),
    ],
    [
      "bus changes (management-cluster orders moved)",
      `${r.outages["bus-change"]}` +
        (r.busChanges.length
          ? ` (${r.busChanges
              .map(
                (b) =>
                  `${b.from} to ${b.to}: ${b.movedMs === undefined ? "NOT moved within the bound" : `moved after ${(b.movedMs / 1000).toFixed(0)} s`}`,
              )
              .join("; ")})`
          : ""),
    ],
    ["graces cut short next to a clock step", String(r.shortGraces.length)],
    ["logins ok", String(r.logins.ok)],
    ["logins auth-failed", String(r.logins.authFailed)],
    ["logins refused while the broker was empty", String(r.logins.refusedWhileEmptied)],
    ["logins other-failed", `${r.logins.other} (${r.logins.otherOutsideFaults} outside a fault window)`],
    ["duration", `${(r.durationMs / 1000).toFixed(0)} s`],
    ["checks", r.failures.length === 0 ? "all passed" : `${r.failures.length} FAILED`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `| ${k.padEnd(width)} | ${v}`);
  const perOrder = r.orders.map(
    (o) =>
      `  ${o.order}: generation ${o.generation}, ok ${o.prober.successes}, auth ${o.prober.authFailures}, ` +
      `other ${o.prober.otherFailures}${o.prober.failureMessages.length ? ` [${o.prober.failureMessages.slice(0, 3).join("; ")}]` : ""}`,
  );
  return [
    ...lines,
    "per order:",
    ...perOrder,
    ...(r.failures.length ? ["failed checks:", ...r.failures.map((f) => `  - ${f}`)] : []),
    ...(r.authFailures.length ? ["auth failures:", ...r.authFailures.map((f) => `  - ${f}`)] : []),
    ...(r.shortGraces.length ? ["graces cut short:", ...r.shortGraces.map((g) => `  - ${g}`)] : []),
    `logs: ${r.workdir} (operator: ${r.operatorLog})`,
  ].join("\n");
}
