// `npm run chaos [-- --short] [-- --seed=N] [-- --workdir=DIR] [-- --orders=N] [-- --minutes=M]
// [-- --faults=KIND=N,...,*=N]`: the chaos suite against the running local environment (see
// docs/reliability.md). `--faults` sets how many faults of each kind the plan draws (`*`: every kind not
// named). Prints the seed first, the figures as one table at the end, and exits 1 when a check failed
// (2 on a bad flag).
import { randomInt } from "node:crypto";
import { tmpdir } from "node:os";
import { parseArgs } from "node:util";
import { FULL, LEADER_FAULTS, SHORT, type ChaosConfig, type FaultKind } from "../harness/chaos/chaos-plan.ts";
import { formatReport } from "../harness/chaos/chaos-report.ts";
import { runChaos } from "../harness/chaos/chaos.ts";

const { values } = parseArgs({
  options: {
    seed: { type: "string" },
    short: { type: "boolean", default: false },
    workdir: { type: "string" },
    orders: { type: "string" },
    minutes: { type: "string" },
    kills: { type: "string" },
    faults: { type: "string" },
  },
});

const seed = values.seed === undefined ? randomInt(2 ** 31) : Number(values.seed);
if (!Number.isSafeInteger(seed) || seed < 0) {
  process.stderr.write(`chaos: --seed must be a non-negative integer, not ${values.seed}\n`);
  process.exit(2);
}
const base = values.short ? SHORT : FULL;
const number = (v: string | undefined, fallback: number) => (v === undefined ? fallback : Number(v));
const runId = `${new Date().toISOString().replace(/[:.]/g, "-")}-seed-${seed}`;
// --faults=emptied-broker=2,lost-live-user=2,*=0: the counts of the kinds named, `*` for the others.
const counts = new Map<string, number>();
for (const part of values.faults ? values.faults.split(",") : []) {
  const [kind = "", n = ""] = part.split("=");
  const known = kind === "*" || kind in base.outages || (LEADER_FAULTS as readonly string[]).includes(kind);
  if (!known || !/^[0-9]+$/.test(n)) {
    process.stderr.write(`chaos: --faults takes KIND=N,... (a fault kind or *), not ${part}\n`);
    process.exit(2);
  }
  counts.set(kind, Number(n));
}
const count = (kind: FaultKind, planned: number) => counts.get(kind) ?? counts.get("*") ?? planned;
const config: ChaosConfig = {
  ...base,
  seed,
  orders: number(values.orders, base.orders),
  targetOrders: Math.min(base.targetOrders, number(values.orders, base.orders)),
  faultWindowMs: values.minutes ? Number(values.minutes) * 60_000 : base.faultWindowMs,
  leaderFaults: {
    kill: number(values.kills, count("kill", base.leaderFaults.kill)),
    pause: count("pause", base.leaderFaults.pause),
    term: count("term", base.leaderFaults.term),
  },
  outages: Object.fromEntries(
    Object.entries(base.outages).map(([kind, n]) => [kind, count(kind as FaultKind, n)]),
  ) as ChaosConfig["outages"],
  workdir: values.workdir ?? `${tmpdir()}/vhost-broker-chaos/${runId}`,
  log: (line) => process.stdout.write(line + "\n"),
};

// Ctrl-C or a TERM ends the run through its clean-up (parts restarted, world removed, operator stopped);
// a second one exits at once.
const abort = new AbortController();
let signals = 0;
for (const name of ["SIGINT", "SIGTERM"] as const) {
  process.on(name, () => {
    if (++signals > 1) process.exit(130);
    process.stdout.write(`chaos: ${name}, cleaning up (again to exit at once)\n`);
    abort.abort(new Error(`interrupted by ${name}`));
  });
}

// The replay names every flag given but the seed's, so that a shortened run's plan comes back too.
const flags = process.argv.slice(2).filter((a) => !a.startsWith("--seed") && !a.startsWith("--workdir"));
process.stdout.write(`chaos: seed ${seed} (replay with ${[`--seed=${seed}`, ...flags].join(" ")})\n`);
try {
  const report = await runChaos({ ...config, signal: abort.signal });
  process.stdout.write(formatReport(report) + "\n");
  process.exit(report.failures.length === 0 ? 0 : 1);
} catch (error) {
  process.stderr.write(
    `chaos: the run failed (seed ${seed}): ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
}
