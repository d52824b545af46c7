// `npm run bench [-- --orders=N] [-- --steady-minutes=M] ...`: the benchmark against the running local
// environment (see docs/performance.md). Progress goes to stderr; the table, with the machine and its
// load under it, to stdout. Exits 1 when the run failed, 2 on a bad flag.
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { parseArgs } from "node:util";
import { imageNodeFlags } from "../harness/operator/operator-process.ts";
import { runtimeSettings } from "../src/runtime/process/config.ts";
import { builtinBackend, type Backend } from "../harness/bench/backend.ts";
import { BROKER_PARTS, DEFAULT_SCALE_BROKERS, benchBroker, isBrokerPart } from "../harness/bench/brokers.ts";
import { writePlots } from "../harness/bench/plots.ts";
import { runBench, type BenchConfig } from "../harness/bench/run.ts";
import {
  defaultSpreadGrace,
  defaultSpreadLeadMinutes,
  formatSpread,
  runSpread,
  spreadIntervalMinutes,
  spreadMachineLine,
} from "../harness/bench/spread.ts";
import { assignOrders, runScale } from "../harness/bench/scale.ts";
import { formatScale, scaleMachineLine } from "../harness/bench/scale-table.ts";
import { comparisonLines, formatTable, machineLine, runLabel } from "../harness/bench/table.ts";
import { upstreamBackend } from "../harness/bench/upstream-backend.ts";
import { runWritesTable } from "../harness/bench/writes.ts";

const backends: Record<string, Backend> = { builtin: builtinBackend, upstream: upstreamBackend };

const usage = `Usage: npm run bench -- [--flag=value ...]
  --orders N            orders of every phase (default 1000; with --phases=scale 10000)
  --steady-minutes M    how long the steady state is observed (default 10; fractions allowed)
  --memory-wait S       seconds between the two readings of the memory after the restart among the
                        unrelated objects (default 50: V8 has collected the restart's garbage by then)
  --unrelated N         unrelated Secrets, and as many ConfigMaps, for the memory figure (default 10000)
  --grace D             the orders' rotation grace period (default 30s; with --phases=spread the
                        window and a minute, and never the window or less)
  --workers N           --max-concurrent-reconciles of the operator in every phase but the sweep
                        (default: the operator's default, ${runtimeSettings["max-concurrent-reconciles"].default})
  --sweep LIST          worker counts tried, comma-separated; "" skips the sweep (default 1,2,4,8)
  --sweep-orders N      orders of each sweep step (default: the smaller of --orders and 100)
  --floor-sample N      items of each concurrency's trial in the floors (default 100)
  --lanes-orders N      orders of each step of the lane-per-broker phases: N on one broker, 2N on two,
                        N beside the hung broker's; 0 skips them (default: the smaller of --orders and 100)
  --hung-orders N       orders of the hung broker in those phases (default 50)
  --scale-objects N     topology objects (a third each Queues, Exchanges, Bindings) of the restart at
                        scale, after the orders' teardown; 0 skips it (default 30000)
  --priority-samples N  in that restart, orders timed on the settled operator, and restarts with an
                        order created as each starts; the figures are the medians (default 3)
  --phases WHICH        all (default), or topology: only the API server's floor and the topology-alone
                        load on each backend (a quicker loop while working on the topology controller),
                        or spread: only the rotation windows' spread of --orders orders' rotations over a
                        window, on the first backend and broker (harness/bench/spread.ts, about 14 min),
                        or scale: --orders orders spread over --brokers with --unrelated objects beside
                        them: cold start, restart, steady state, a rotation over a window, teardown, with
                        memory per 1,000 orders (harness/bench/scale.ts; about 70 min at 10,000)
  --scale-window-minutes W
                        the scale phase's rotation window, in whole minutes (default 10)
  --spread-window-minutes W
                        the spread's window, in whole minutes (default 2: see docs/performance.md)
  --spread-lead-minutes L
                        the spread's window opens at the first whole minute L minutes after the first
                        order is created; every first generation must be live and its rotation due
                        (interval W + 3 min) before, so at least W + 5 (default W + 6)
  --backend LIST        what serves the topology objects, comma-separated: ${Object.keys(backends).join(", ")}
                        (default builtin); several run every phase one after the other after the same
                        floors, and the table shows them side by side
  --brokers LIST        the local environment's brokers the orders go to, comma-separated:
                        ${BROKER_PARTS.join(", ")} (default rabbitmq); several: each gets its own floors
                        (the broker floor with the growth of a vhost's cost, the topology floor), then
                        every backend runs on each, the first with every phase, the others with the
                        cold start, restart, steady state, rotation, topology and teardown; the table
                        names each by its RabbitMQ version; with --phases=scale the brokers the orders
                        are spread over (default ${DEFAULT_SCALE_BROKERS.join(", ")}), a broker given as
                        part:count getting count of them and the others the rest evenly; rabbitmq-43 runs
                        only after scripts/localenv.sh rabbitmq-43 up
  --node-flags FLAGS    V8 flags of the operator processes, space-separated, instead of the image's
                        (default "${imageNodeFlags.join(" ")}"): to weigh memory against CPU
  --workdir DIR         where the operator's log goes (default a fresh folder under the system's tmp)
  --json FILE           also write the report as JSON
  --plots DIR           also write the report's plots there as SVG (harness/bench/plots.ts)`;

function fail(message: string): never {
  process.stderr.write(`bench: ${message}\n${usage}\n`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      orders: { type: "string" },
      "steady-minutes": { type: "string", default: "10" },
      "memory-wait": { type: "string", default: "50" },
      unrelated: { type: "string", default: "10000" },
      grace: { type: "string" },
      workers: { type: "string", default: runtimeSettings["max-concurrent-reconciles"].default },
      sweep: { type: "string", default: "1,2,4,8" },
      "sweep-orders": { type: "string" },
      "floor-sample": { type: "string", default: "100" },
      "lanes-orders": { type: "string" },
      "hung-orders": { type: "string", default: "50" },
      "scale-objects": { type: "string", default: "30000" },
      "priority-samples": { type: "string", default: "3" },
      phases: { type: "string", default: "all" },
      "spread-window-minutes": { type: "string", default: "2" },
      "spread-lead-minutes": { type: "string" },
      "scale-window-minutes": { type: "string", default: "10" },
      backend: { type: "string", default: "builtin" },
      brokers: { type: "string" },
      "node-flags": { type: "string", default: imageNodeFlags.join(" ") },
      workdir: { type: "string" },
      json: { type: "string" },
      plots: { type: "string" },
      help: { type: "boolean", default: false },
    },
  }));
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
if (values.help) {
  process.stdout.write(usage + "\n");
  process.exit(0);
}

function count(name: string, text: string | undefined, min = 1): number {
  const v = Number(text);
  if (!Number.isSafeInteger(v) || v < min)
    fail(`--${name} must be an integer of at least ${min}, not ${text}`);
  return v;
}

const phases = values.phases;
if (phases !== "all" && phases !== "topology" && phases !== "spread" && phases !== "scale")
  fail(`--phases must be all or topology or spread or scale, not ${phases}`);
const orders = count("orders", values.orders ?? (phases === "scale" ? "10000" : "1000"));
const minutes = Number(values["steady-minutes"]);
if (!(minutes >= 0)) fail(`--steady-minutes must be a number of at least 0, not ${values["steady-minutes"]}`);
const memoryWait = Number(values["memory-wait"]);
if (!(memoryWait >= 0)) fail(`--memory-wait must be a number of at least 0, not ${values["memory-wait"]}`);
if (values.grace !== undefined && !/^\d+(ms|s|m|h)$/.test(values.grace))
  fail(`--grace must be a duration like 30s, not ${values.grace}`);
const chosen = values.backend.split(",").map((name) => {
  const backend = backends[name];
  if (!backend) fail(`--backend must name ${Object.keys(backends).join(", ")}, not ${name || '""'}`);
  return backend;
});
const spreadWindow = count("spread-window-minutes", values["spread-window-minutes"]);
if (spreadWindow > 24 * 60) fail(`--spread-window-minutes must be at most 1440 (24h), not ${spreadWindow}`);
const spreadLead =
  values["spread-lead-minutes"] === undefined
    ? defaultSpreadLeadMinutes(spreadWindow)
    : count("spread-lead-minutes", values["spread-lead-minutes"], spreadIntervalMinutes(spreadWindow) + 2);
if (new Set(chosen).size !== chosen.length) fail(`--backend names a backend twice: ${values.backend}`);
const scaleWindow = count("scale-window-minutes", values["scale-window-minutes"]);
if (scaleWindow > 24 * 60) fail(`--scale-window-minutes must be at most 1440 (24h), not ${scaleWindow}`);
const brokerList = values.brokers ?? (phases === "scale" ? DEFAULT_SCALE_BROKERS.join(",") : "rabbitmq");
const brokerEntries = brokerList.split(",").map((entry) => {
  const [name = "", countText] = entry.split(":");
  if (!isBrokerPart(name)) fail(`--brokers must name ${BROKER_PARTS.join(", ")}, not ${name || '""'}`);
  if (countText !== undefined && phases !== "scale")
    fail(`--brokers takes part:count only with --phases=scale`);
  return { part: name, orders: countText === undefined ? undefined : count("brokers", countText) };
});
const brokerParts = brokerEntries.map((b) => b.part);
if (new Set(brokerParts).size !== brokerParts.length) fail(`--brokers names a broker twice: ${brokerList}`);
let brokerOrders: number[] = [];
try {
  brokerOrders = assignOrders(
    orders,
    brokerEntries.map((b) => b.orders),
  );
} catch (error) {
  fail(
    `--brokers ${brokerList} with --orders=${orders}: ${error instanceof Error ? error.message : String(error)}`,
  );
}
const nodeFlags = values["node-flags"].split(/\s+/).filter((flag) => flag !== "");
const notFlag = nodeFlags.find((flag) => !flag.startsWith("--"));
if (notFlag !== undefined) fail(`--node-flags takes flags that start with --, not ${notFlag}`);
const sweep = values.sweep === "" ? [] : values.sweep.split(",").map((w) => count("sweep", w));
// Ctrl-C or a TERM ends the run at its next wait, through its clean-up (the world removed, the
// operator stopped); a second one exits at once.
const abort = new AbortController();
let signals = 0;
for (const name of ["SIGINT", "SIGTERM"] as const) {
  process.on(name, () => {
    if (++signals > 1) process.exit(130);
    process.stderr.write(`bench: ${name}, cleaning up (again to exit at once)\n`);
    abort.abort(new Error(`interrupted by ${name}`));
  });
}
const runId = new Date().toISOString().replace(/[:.]/g, "-");

// Each broker with the version its management API reports (the env's when it does not answer).
const brokers = await Promise.all(brokerParts.map(benchBroker));
const workdir = values.workdir ?? `${tmpdir()}/vhost-broker-bench/${runId}`;
const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);

const jsonFile = values.json;

/** A phase that runs on its own: its report as JSON with --json, its text on stdout; the exit code. */
async function runAlone<R>(run: () => Promise<R>, text: (report: R) => string): Promise<number> {
  try {
    const report = await run();
    if (jsonFile) writeFileSync(jsonFile, JSON.stringify(report, null, 2) + "\n");
    process.stdout.write(`${text(report)}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`bench: the run failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    return 1;
  }
}

// The spread phase alone: its own world and operator, its own table.
if (phases === "spread") {
  const [backend] = chosen;
  const [broker] = brokers;
  if (!backend || !broker) fail("--phases=spread needs a backend and a broker");
  process.exit(
    await runAlone(
      () =>
        runSpread({
          backend,
          broker,
          orders,
          windowMinutes: spreadWindow,
          leadMinutes: spreadLead,
          gracePeriod: values.grace ?? defaultSpreadGrace(spreadWindow),
          workers: count("workers", values.workers),
          workdir,
          nodeFlags,
          log,
          signal: abort.signal,
        }),
      (report) => `${formatSpread(report)}\n\n${spreadMachineLine(report)}`,
    ),
  );
}
// The scale phase alone: its own worlds and operator, its own table.
if (phases === "scale") {
  const [backend] = chosen;
  if (!backend) fail("--phases=scale needs a backend");
  process.exit(
    await runAlone(
      () =>
        runScale({
          backend,
          brokers: brokers.map((broker, i) => ({ broker, orders: brokerOrders[i] ?? 0 })),
          unrelated: count("unrelated", values.unrelated, 0),
          steadyMs: minutes * 60_000,
          memoryWaitMs: memoryWait * 1000,
          windowMinutes: scaleWindow,
          gracePeriod: values.grace ?? "30s",
          workers: count("workers", values.workers),
          workdir,
          nodeFlags,
          log,
          signal: abort.signal,
        }),
      (report) => `${formatScale(report)}\n\n${scaleMachineLine(report)}`,
    ),
  );
}
const config: BenchConfig = {
  backends: chosen,
  brokers,
  phases,
  orders,
  workers: count("workers", values.workers),
  steadyMs: minutes * 60_000,
  memoryWaitMs: memoryWait * 1000,
  unrelated: count("unrelated", values.unrelated, 0),
  gracePeriod: values.grace ?? "30s",
  sweep,
  sweepOrders:
    values["sweep-orders"] === undefined
      ? Math.min(orders, 100)
      : count("sweep-orders", values["sweep-orders"]),
  floorSample: count("floor-sample", values["floor-sample"]),
  lanesOrders:
    values["lanes-orders"] === undefined
      ? Math.min(orders, 100)
      : count("lanes-orders", values["lanes-orders"], 0),
  hungOrders: count("hung-orders", values["hung-orders"]),
  scaleObjects: count("scale-objects", values["scale-objects"], 0),
  prioritySamples: count("priority-samples", values["priority-samples"]),
  brokerConcurrency: [1, 2, 4, 8],
  apiConcurrency: [1, 4, 16, 64],
  workdir,
  nodeFlags,
  log,
  signal: abort.signal,
};

try {
  const report = await runBench(config);
  if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2) + "\n");
  // The plots name each run as the table's columns do (its broker and version, with several brokers).
  const plotted = { ...report, runs: report.runs.map((run) => ({ ...run, backend: runLabel(report, run) })) };
  if (values.plots) for (const file of writePlots(plotted, values.plots)) config.log(`plot: ${file}`);
  const comparison = comparisonLines(report).map((line) => `${line}\n`);
  const writes = runWritesTable(report);
  process.stdout.write(
    `${formatTable(report)}\n\n${writes && `${writes}\n\n`}${comparison.join("")}${machineLine(report)}\n`,
  );
  process.exit(0);
} catch (error) {
  process.stderr.write(`bench: the run failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
}
