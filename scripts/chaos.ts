// `npm run chaos [-- --short] [-- --seed=N] [-- --workdir=DIR] [-- --orders=N] [-- --minutes=M]`: the
// chaos suite against the running local environment (see docs/reliability.md). Prints the seed first,
// the figures as one table at the end, and exits 1 when a check failed (2 on a bad flag).
import { randomInt } from "node:crypto";
import { tmpdir } from "node:os";
import { parseArgs } from "node:util";
import { FULL, SHORT, type ChaosConfig } from "../e2e/support/chaos-plan.ts";
import { formatReport } from "../e2e/support/chaos-report.ts";
import { runChaos } from "../e2e/support/chaos.ts";

const { values } = parseArgs({
  options: {
    seed: { type: "string" },
    short: { type: "boolean", default: false },
    workdir: { type: "string" },
    orders: { type: "string" },
    minutes: { type: "string" },
    kills: { type: "string" },
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
const config: ChaosConfig = {
  ...base,
  seed,
  orders: number(values.orders, base.orders),
  targetOrders: Math.min(base.targetOrders, number(values.orders, base.orders)),
  faultWindowMs: values.minutes ? Number(values.minutes) * 60_000 : base.faultWindowMs,
  leaderFaults: { ...base.leaderFaults, kill: number(values.kills, base.leaderFaults.kill) },
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

process.stdout.write(`chaos: seed ${seed} (replay with --seed=${seed}${values.short ? " --short" : ""})\n`);
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
