// What a chaos run found, and the table it prints.
import type { ProberCounts } from "./login-prober.ts";
import type { ChaosConfig, FaultKind } from "./chaos-plan.ts";

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
  kills: number;
  outages: Record<Exclude<FaultKind, "kill">, number>;
  logins: { ok: number; authFailed: number; other: number; otherOutsideFaults: number };
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
    ["rotations", String(r.rotations)],
    ["operator kills (SIGKILL)", String(r.kills)],
    ["rabbitmq outages", String(r.outages.rabbitmq)],
    ["openbao outages", String(r.outages.openbao)],
    ["management-apiserver outages", String(r.outages["management-apiserver"])],
    ["endpoint withdrawals", String(r.outages.endpoint)],
    ["status wipes", String(r.outages["status-wipe"])],
    ["stalled deliveries with a lost successor User", String(r.outages["stalled-delivery"])],
    ["logins ok", String(r.logins.ok)],
    ["logins auth-failed", String(r.logins.authFailed)],
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
    `logs: ${r.workdir} (operator: ${r.operatorLog})`,
  ].join("\n");
}
