// `node harness/bench/auth-tracking.ts [--users=N] [--logins=M] [--concurrency=C] [--sources=S]`: what
// RabbitMQ's login records by user cost the local environment's 4.3 node (`localNode("rabbitmq")`), the
// records the sweep reads as logins since the switch (src/orders/rabbitmq/logins.ts). Twice, with
// `track_auth_attempt_source` off and then on (set at runtime with rabbitmqctl; the node reads it at
// every login): N users, each with a vhost of its own, created through the management API; M AMQP logins
// round-robin over them, C at a time, from S loopback source addresses (the records are keyed by address,
// user and protocol; for AMQP 0-9-1 RabbitMQ records the address the connection reached, its listener's,
// so more source addresses make no more records); then the logins per second, the node's memory
// (`GET /api/nodes` mem_used, and the ETS tables of the login records) and the size of
// `GET /api/auth/attempts/{node}/source`. Every user and vhost it made is deleted and the option set back
// to false, also on failure or Ctrl-C. The records themselves stay until the node restarts: deleting them
// (DELETE /api/auth/attempts/{node}/source) would also reset the counts an operator on the shared node
// compares with. Progress goes to stderr, the table to stdout; exits 1 when the run failed, 2 on a bad
// flag. Not part of npm test; a run's figures are in docs/orders.md ("Turning the login records on").
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import amqp from "amqplib";
import { localNode } from "../world/local-brokers.ts";
import type { LocalBroker } from "../world/managed-bus.ts";
import { inParallel, range, sleep } from "./concurrency.ts";

const usage = `Usage: node harness/bench/auth-tracking.ts [--flag=value ...]
  --users N        users (each with a vhost of its own) of each phase (default 200)
  --logins M       AMQP logins of each phase, round-robin over the users (default 2000)
  --concurrency C  logins in flight at once (default 4)
  --sources S      loopback source addresses the logins come from, 127.0.0.1 to 127.0.0.S (default 1)`;

function fail(message: string): never {
  process.stderr.write(`auth-tracking: ${message}\n${usage}\n`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      users: { type: "string", default: "200" },
      logins: { type: "string", default: "2000" },
      concurrency: { type: "string", default: "4" },
      sources: { type: "string", default: "1" },
    },
  }));
} catch (error) {
  fail((error as Error).message);
}
const count = (name: keyof typeof values, max = Infinity) => {
  const n = Number(values[name]);
  if (!Number.isSafeInteger(n) || n < 1 || n > max)
    fail(`--${name} takes a whole number from 1, not ${values[name]}`);
  return n;
};
const USERS = count("users");
const LOGINS = count("logins");
const CONCURRENCY = count("concurrency");
const SOURCES = count("sources", 254);

const node = localNode("rabbitmq");
const broker: LocalBroker = node.broker;
const log = (line: string) => process.stderr.write(`auth-tracking: ${line}\n`);
/** How long the node's metrics collector may take to refresh mem_used (collect_statistics_interval, 5 s). */
const STATS_INTERVAL_MS = 6_000;

const abort = new AbortController();
let signals = 0;
for (const name of ["SIGINT", "SIGTERM"] as const) {
  process.on(name, () => {
    if (++signals > 1) process.exit(130);
    log(`${name}, cleaning up (again to exit at once)`);
    abort.abort(new Error(`interrupted by ${name}`));
  });
}

function rabbitmqctl(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(node.rabbitmqctl, args, { timeout: 60_000 }, (error, stdout, stderr) =>
      error
        ? reject(new Error(`rabbitmqctl ${args.join(" ")}: ${stderr || error.message}`))
        : resolve(stdout),
    ),
  );
}

const setTracking = (on: boolean) =>
  rabbitmqctl("eval", `application:set_env(rabbit, track_auth_attempt_source, ${on}).`);

const authorization = `Basic ${Buffer.from(`${broker.adminUsername}:${broker.adminPassword}`).toString("base64")}`;

/** One management API request as the administrator: its body's text; throws unless 2xx. */
async function api(method: string, path: string, body?: unknown): Promise<string> {
  const answer = await fetch(new URL(path, broker.managementUrl), {
    method,
    headers: { authorization, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? null : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await answer.text();
  if (!answer.ok) throw new Error(`${method} ${path}: HTTP ${answer.status} ${text.slice(0, 200)}`);
  return text;
}

const nodeNames = async () =>
  (JSON.parse(await api("GET", "/api/nodes")) as { name: string }[]).map((n) => n.name);

/** mem_used summed over the cluster's nodes, as the management API reports it. */
async function memUsed(): Promise<number> {
  const nodes = JSON.parse(await api("GET", "/api/nodes")) as { mem_used?: number }[];
  return nodes.reduce((sum, n) => sum + (n.mem_used ?? 0), 0);
}

/** The records by source on every node: their count and the answers' size in bytes. */
async function sourceRecords(): Promise<{ entries: number; bytes: number }> {
  let entries = 0;
  let bytes = 0;
  for (const name of await nodeNames()) {
    const text = await api("GET", `/api/auth/attempts/${encodeURIComponent(name)}/source`);
    entries += (JSON.parse(text) as unknown[]).length;
    bytes += Buffer.byteLength(text);
  }
  return { entries, bytes };
}

const TABLES = ["auth_attempt_metrics", "auth_attempt_detailed_metrics"] as const;

/** Rows and bytes of the node's login-record ETS tables (the per-protocol and the per-source one). */
async function etsTables(): Promise<Record<(typeof TABLES)[number], { rows: number; bytes: number }>> {
  const out = await rabbitmqctl(
    "eval",
    `[{T, ets:info(T, size), ets:info(T, memory) * erlang:system_info(wordsize)} || T <- [${TABLES.join(", ")}]].`,
  );
  const read = (table: string) => {
    const m = new RegExp(`\\{${table},(\\d+),(\\d+)\\}`).exec(out.replace(/\s/g, ""));
    if (!m) throw new Error(`no ETS table ${table} in: ${out.trim()}`);
    return { rows: Number(m[1]), bytes: Number(m[2]) };
  };
  return { auth_attempt_metrics: read(TABLES[0]), auth_attempt_detailed_metrics: read(TABLES[1]) };
}

interface Snapshot {
  memUsed: number;
  detailed: { rows: number; bytes: number };
  source: { entries: number; bytes: number };
}

async function snapshot(): Promise<Snapshot> {
  await sleep(STATS_INTERVAL_MS, abort.signal);
  const ets = await etsTables();
  return {
    memUsed: await memUsed(),
    detailed: ets.auth_attempt_detailed_metrics,
    source: await sourceRecords(),
  };
}

interface Phase {
  tracking: boolean;
  loginsPerSecond: number;
  p95Ms: number;
  failed: number;
  before: Snapshot;
  after: Snapshot;
  /** The records by source once the phase's users and vhosts are deleted. */
  afterCleanup: { entries: number; bytes: number };
}

const runId = randomBytes(4).toString("hex");
/** Every user (and vhost of the same name) made and not yet deleted. */
const made = new Set<string>();

async function removeUsers(names: readonly string[]): Promise<void> {
  const failures: string[] = [];
  await inParallel(names, 8, async (name) => {
    const path = encodeURIComponent(name);
    for (const what of [`/api/users/${path}`, `/api/vhosts/${path}`]) {
      try {
        await api("DELETE", what);
      } catch (error) {
        if (!/HTTP 404/.test((error as Error).message)) failures.push((error as Error).message);
      }
    }
    made.delete(name);
  });
  if (failures.length > 0) throw new Error(`clean-up: ${failures.length} failed, first: ${failures[0]}`);
}

/** The socket of login `i`: its source address (net.connect's localAddress, which amqplib passes on). */
function socketOptions(i: number): { timeout: number } {
  const options = { localAddress: `127.0.0.${(i % SOURCES) + 1}`, timeout: 10_000 };
  return options;
}

async function runPhase(tracking: boolean): Promise<Phase> {
  const label = tracking ? "on" : "off";
  const password = randomBytes(12).toString("hex");
  const users = range(USERS).map((i) => `authbench-${runId}-${label}-${String(i).padStart(4, "0")}`);
  await setTracking(tracking);
  try {
    log(`tracking ${label}: creating ${USERS} users with a vhost each`);
    await inParallel(
      users,
      8,
      async (name) => {
        const path = encodeURIComponent(name);
        made.add(name);
        await api("PUT", `/api/vhosts/${path}`, {});
        await api("PUT", `/api/users/${path}`, { password, tags: "" });
        await api("PUT", `/api/permissions/${path}/${path}`, { configure: ".*", write: ".*", read: ".*" });
      },
      abort.signal,
    );
    abort.signal.throwIfAborted();
    const before = await snapshot();
    log(`tracking ${label}: ${LOGINS} logins, ${CONCURRENCY} at a time, from ${SOURCES} source address(es)`);
    const durations: number[] = [];
    let failed = 0;
    const started = performance.now();
    await inParallel(
      range(LOGINS),
      CONCURRENCY,
      async (i) => {
        const user = users[i % USERS] ?? "";
        const t0 = performance.now();
        try {
          const connection = await amqp.connect(
            {
              protocol: "amqp",
              hostname: broker.amqpHost,
              port: broker.amqpPort,
              username: user,
              password,
              vhost: user,
            },
            socketOptions(i),
          );
          await connection.close();
          durations.push(performance.now() - t0);
        } catch (error) {
          if (failed++ === 0) log(`first failed login (${user}): ${(error as Error).message}`);
        }
      },
      abort.signal,
    );
    const seconds = (performance.now() - started) / 1000;
    abort.signal.throwIfAborted();
    const after = await snapshot();
    durations.sort((a, b) => a - b);
    const p95Ms = durations[Math.min(durations.length - 1, Math.floor(durations.length * 0.95))] ?? NaN;
    await removeUsers(users);
    const afterCleanup = await sourceRecords();
    return {
      tracking,
      loginsPerSecond: (LOGINS - failed) / seconds,
      p95Ms,
      failed,
      before,
      after,
      afterCleanup,
    };
  } finally {
    await removeUsers(users.filter((u) => made.has(u))).catch((error: Error) => log(error.message));
  }
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const mibDelta = (bytes: number) => `${bytes >= 0 ? "+" : ""}${(bytes / 2 ** 20).toFixed(1)} MiB`;

function table(phases: readonly Phase[]): string {
  const rows: [string, ...string[]][] = [
    ["track_auth_attempt_source", ...phases.map((p) => (p.tracking ? "on" : "off"))],
    ["logins per second", ...phases.map((p) => p.loginsPerSecond.toFixed(0))],
    ["login p95", ...phases.map((p) => `${p.p95Ms.toFixed(1)} ms`)],
    ["failed logins", ...phases.map((p) => String(p.failed))],
    [
      "mem_used before -> after the logins",
      ...phases.map(
        (p) =>
          `${(p.before.memUsed / 2 ** 20).toFixed(1)} -> ${(p.after.memUsed / 2 ** 20).toFixed(1)} MiB (${mibDelta(p.after.memUsed - p.before.memUsed)})`,
      ),
    ],
    [
      "auth_attempt_detailed_metrics rows",
      ...phases.map((p) => `${p.before.detailed.rows} -> ${p.after.detailed.rows}`),
    ],
    [
      "auth_attempt_detailed_metrics memory",
      ...phases.map((p) => `${kib(p.before.detailed.bytes)} -> ${kib(p.after.detailed.bytes)}`),
    ],
    [
      "bytes per record",
      ...phases.map((p) => {
        const rows = p.after.detailed.rows - p.before.detailed.rows;
        return rows > 0 ? ((p.after.detailed.bytes - p.before.detailed.bytes) / rows).toFixed(0) : "-";
      }),
    ],
    [
      "GET /api/auth/attempts/{node}/source",
      ...phases.map((p) => `${p.after.source.entries} entries, ${kib(p.after.source.bytes)}`),
    ],
    [
      "... after the users are deleted",
      ...phases.map((p) => `${p.afterCleanup.entries} entries, ${kib(p.afterCleanup.bytes)}`),
    ],
  ];
  const [head, ...body] = rows as [[string, ...string[]], ...[string, ...string[]][]];
  const widths = head.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  const line = (r: readonly string[]) => `| ${r.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join(" | ")} |`;
  return [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body.map(line)].join("\n");
}

let exitCode = 0;
try {
  const version = (JSON.parse(await api("GET", "/api/overview")) as { rabbitmq_version?: string })
    .rabbitmq_version;
  log(`RabbitMQ ${version ?? node.version} at ${broker.managementUrl}, run ${runId}`);
  const phases: Phase[] = [];
  for (const tracking of [false, true]) phases.push(await runPhase(tracking));
  process.stdout.write(
    `RabbitMQ ${version ?? node.version} (${node.part}): ${USERS} users, ${LOGINS} AMQP logins, ` +
      `${CONCURRENCY} at a time, from ${SOURCES} source address(es)\n${table(phases)}\n`,
  );
} catch (error) {
  log(`failed: ${(error as Error).message}`);
  exitCode = 1;
} finally {
  try {
    await setTracking(false);
  } catch (error) {
    log(`setting track_auth_attempt_source back to false failed: ${(error as Error).message}`);
    exitCode = 1;
  }
  if (made.size > 0) {
    await removeUsers([...made]).catch((error: Error) => {
      log(error.message);
      exitCode = 1;
    });
  }
}
process.exit(exitCode);
