// The smoke check of `npm run bench`: a short run of the script as a child process against the local
// environment, which must finish and print the table with every row. It asserts no figure: the
// benchmark's figures are read by people (docs/performance.md), never checked by a test.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const script = fileURLToPath(new URL("../scripts/bench.ts", import.meta.url));
const workdir = mkdtempSync(`${tmpdir()}/vhost-broker-bench-smoke-`);

/** The Markdown tables of the output, in order: each a list of rows of trimmed cells. */
function tables(stdout: string): string[][][] {
  const found: string[][][] = [];
  let current: string[][] | undefined;
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("|")) {
      current = undefined;
      continue;
    }
    if (!current) found.push((current = []));
    current.push(
      line
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  }
  return found;
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("npm run bench, a short run", () => {
  afterAll(() => rmSync(workdir, { recursive: true, force: true }));

  it("refuses a bad flag with exit code 2 and the usage", async () => {
    const result = await run(["--orders=none"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--orders must be an integer/);
    expect(result.stderr).toMatch(/Usage: npm run bench/);
    const unknown = await run(["--backend=builtin,nope"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--backend must name builtin, upstream, not nope/);
    expect((await run(["--phases=orders"])).stderr).toMatch(/--phases must be all or topology/);
    expect((await run(["--brokers=rabbitmq,rabbitmq-3"])).stderr).toMatch(
      /--brokers must name rabbitmq, rabbitmq-2, rabbitmq-40, rabbitmq-43, not rabbitmq-3/,
    );
    expect((await run(["--node-flags=--max-semi-space-size=4 16"])).stderr).toMatch(
      /--node-flags takes flags that start with --, not 16/,
    );
    expect((await run(["--brokers=rabbitmq:5"])).stderr).toMatch(
      /--brokers takes part:count only with --phases=scale/,
    );
    expect((await run(["--phases=scale", "--orders=10", "--brokers=rabbitmq:20,rabbitmq-2"])).stderr).toMatch(
      /the brokers' counts add up to 20, more than the 10 orders/,
    );
  });

  it("runs every phase with 50 orders on both backends and prints them side by side", async () => {
    const result = await run([
      "--orders=50",
      "--backend=builtin,upstream",
      "--steady-minutes=0.2",
      // The second memory reading's wait is for V8's collection at scale; the smoke reads both at once.
      "--memory-wait=0",
      "--unrelated=200",
      "--grace=5s",
      "--sweep=1,4",
      "--sweep-orders=10",
      "--floor-sample=50",
      // The lane-per-broker phases are left out: run by hand (docs/performance.md), and their operator
      // behaviour is e2e/broker-lanes.itest.ts's.
      "--lanes-orders=0",
      "--scale-objects=30",
      "--priority-samples=1",
      `--workdir=${workdir}`,
    ]);
    expect(result.code, result.stderr.slice(-3000)).toBe(0);
    const [rows = [], ...more] = tables(result.stdout);
    expect(rows[0]).toEqual([
      "phase",
      "figure",
      "builtin",
      "upstream",
      "floor (same run)",
      "ratio builtin",
      "ratio upstream",
      "target",
    ]);
    const body = rows.slice(2);
    expect(body.every((r) => r.length === 8)).toBe(true);
    const phases = [...new Set(body.map((r) => r[0]))];
    expect(phases).toEqual([
      "floor",
      "cold start",
      "restart",
      "rotation",
      "steady state",
      "memory",
      "topology",
      "teardown",
      "restart at scale",
      "workers",
    ]);
    // The broker's floor names its version, and the growth of a vhost's cost with the vhosts it holds.
    expect(body[0]?.[1]).toMatch(/^broker RabbitMQ \d+\.\d+\.\d+ \(rabbitmq\): 50 vhosts/);
    const growth = body.find((r) => r[1]?.startsWith("broker: 40 more at concurrency 1"));
    for (const value of [growth?.[2], growth?.[3]])
      expect(value).toMatch(/^[\d.]+ s holding \d+ vhosts -> [\d.]+ s holding \d+; \d+ ms -> \d+ ms each$/);
    expect(growth?.[5]).toMatch(/^\d+\.\d+x$/);
    // Every figure has a measured value (a number in it) on each backend, none is missing; upstream
    // counts no broker requests, which its column says as n/a.
    for (const row of body) {
      expect(row[2], row.join(" | ")).toMatch(/\d/);
      expect(row[3], row.join(" | ")).toMatch(/\d|^n\/a/);
    }
    // The built-in backend's two replicas kept one leader through the cold start and the rotation storm.
    const lease = body.filter((r) => r[1]?.startsWith("Lease transitions"));
    expect(lease.map((r) => [r[0], r[2]])).toEqual([
      ["cold start", "0"],
      ["rotation", "0"],
    ]);
    const coldStart = body.find((r) => r[1]?.startsWith("50 orders Ready"));
    expect(coldStart?.[5]).toMatch(/^\d+\.\d+x$/);
    expect(coldStart?.[6]).toMatch(/^\d+\.\d+x$/);
    // The machine's CPU names the processes that used it: the broker in its floor, the API servers in
    // theirs, the operator in its phases, on each backend.
    const machine = body.filter((r) => r[1]?.startsWith("machine CPU"));
    expect(machine.map((r) => r[0])).toEqual(["floor", "floor", "cold start", "rotation"]);
    const used = [/\bbroker [\d.]+/, /\bAPI servers [\d.]+/, /\boperator [\d.]+/, /\boperator [\d.]+/];
    machine.forEach((r, i) => {
      for (const value of [r[2], r[3]]) {
        expect(value).toMatch(/^\d+% of \d+ cores busy \([\d.]+ of [\d.]+ core-s\): /);
        expect(value).toMatch(used[i]!);
      }
    });
    // The API server's CPU floor of a phase's writes, with the phase's ratio to it on each backend.
    const apiCpu = body.filter((r) => r[1]?.startsWith("API server and etcd CPU of"));
    expect(apiCpu.map((r) => r[0])).toEqual(["cold start", "rotation"]);
    for (const r of apiCpu) {
      expect(r[2]).toMatch(/^[\d.]+ s \([\d.]+ core-s: [\d.]+ writes per order at [\d.]+ ms\)$/);
      expect([r[5], r[6]]).toEqual([
        expect.stringMatching(/^\d+\.\d+x$/),
        expect.stringMatching(/^\d+\.\d+x$/),
      ]);
    }
    // The restart at scale has its rows (their figures are for people: the operator also serves the
    // other files' leftovers on the shared cluster, which write).
    expect(body.filter((r) => r[0] === "restart at scale")).toHaveLength(7);
    const duringRestart = body.find((r) => r[1]?.startsWith("restart again, an order created as it starts"));
    expect(duringRestart?.[2], duringRestart?.join(" | ")).toMatch(/^[\d.]+ s$/);
    // The writes per order by what they write, the cold start's and the rotation's on each backend: the
    // order's status and its delivered Secret among them, and the orders' total.
    const [writes = []] = more;
    expect(writes[0]).toEqual([
      "write",
      "resource subresource verb",
      "builtin cold start",
      "builtin rotation",
      "upstream cold start",
      "upstream rotation",
    ]);
    const writeRow = (what: string) => writes.find((r) => r[0] === what);
    expect(writeRow("order status")?.[1]).toBe("`rabbitmqvhosts.c5c3.io status patch`");
    expect(
      writeRow("Secret apply")
        ?.slice(2)
        .every((v) => Number(v) >= 1),
    ).toBe(true);
    expect(
      writeRow("orders' writes, the Lease apart")
        ?.slice(2)
        .every((v) => Number(v) > 0),
    ).toBe(true);
    // Upstream's operator says nothing of what it writes: its writes are counted apart.
    expect(writeRow("written by another process (the topology operator)")?.[4]).toMatch(/^[\d.]+$/);
    const others = body.filter((r) => r[1]?.startsWith("CPU of everything but the operator"));
    expect(others.map((r) => r[0])).toEqual(["cold start", "rotation"]);
    for (const r of others) expect(r[5]).toMatch(/^\d+\.\d+x$/);
    expect(result.stdout).toMatch(/builtin against upstream: topology alone \d+\.\d+x the objects\/s/);
    expect(result.stdout).toMatch(
      /backend builtin and upstream, broker RabbitMQ \d+\.\d+\.\d+ \(rabbitmq\), --max-concurrent-reconciles=\d+ \(.*\); node --max-semi-space-size=1 --memory-saver-mode; .* load average/,
    );
  }, 900_000);

  it("runs the scale phase over three brokers, one given its share, with a rotation window", async () => {
    const result = await run([
      "--phases=scale",
      "--orders=30",
      "--brokers=rabbitmq,rabbitmq-40,rabbitmq-2:6",
      "--unrelated=50",
      "--steady-minutes=0.2",
      "--memory-wait=0",
      "--scale-window-minutes=1",
      `--workdir=${workdir}`,
    ]);
    expect(result.code, result.stderr.slice(-3000)).toBe(0);
    const [rows = [], writes = []] = tables(result.stdout);
    expect(rows[0]).toEqual(["figure", "value"]);
    const value = (figure: string) => rows.find((r) => r[0]?.startsWith(figure))?.[1];
    expect(value("orders per broker")).toMatch(
      /^12 on RabbitMQ 4\.3\.\d+ \(rabbitmq\); 12 on RabbitMQ 4\.0\.\d+ \(rabbitmq-40\); 6 on RabbitMQ 3\.10\.\d+ \(rabbitmq-2\)$/,
    );
    for (const part of ["rabbitmq", "rabbitmq-40", "rabbitmq-2"]) {
      const ready = rows.find(
        (r) => r[0]?.startsWith("cold start: the orders on") && r[0].endsWith(`(${part}) Ready`),
      );
      expect(ready?.[1]).toMatch(/^[\d.]+ s \([\d.]+ orders\/s\)$/);
      expect(rows.find((r) => r[0]?.startsWith("broker RSS") && r[0].endsWith(`(${part})`))?.[1]).toMatch(
        /^\d+ MiB before, \d+ MiB after its \d+ orders: -?\d+ MiB per 1,000$/,
      );
    }
    expect(value("operator memory per 1,000 orders")).toMatch(/^-?\d+ MiB RSS, -?\d+ MiB JS heap$/);
    expect(value("restart: requests caused")).toMatch(/^API \d+ writes, \d+ reads; broker \d+ writes/);
    expect(value("steady state (0.2 min): per 1,000 orders per hour")).toMatch(
      /^API [\d,]+ writes, [\d,]+ reads;/,
    );
    // The window held every rotation: all 30 switched inside its one minute, none before or after it.
    expect(value("rotation: switches per minute of the window")).toBe("30");
    expect(value("rotation: switches outside the window")).toBe("0 before, 0 after");
    expect(value("rotation: orders gone to the next window")).toBe("0");
    expect(value("rotation: window opened -> all swept")).toMatch(/^[\d.]+ s$/);
    expect(value("rotation: operator CPU per rotated order")).toMatch(/^[\d.]+ ms$/);
    expect(value("teardown: 30 orders gone")).toMatch(/^[\d.]+ s$/);
    // The writes per order by what they write, the cold start's and the rotation's.
    expect(writes[0]).toEqual([
      "write",
      "resource subresource verb",
      "cold start",
      "rotation over the window",
    ]);
    const own = writes.find((r) => r[0] === "orders' writes, the Lease apart");
    expect(own?.slice(2).every((v) => Number(v) > 0)).toBe(true);
    expect(result.stdout).toMatch(/backend builtin, --max-concurrent-reconciles=\d+; node .*; load average/);
  }, 600_000);

  it("runs only the API floor and the topology-alone load with --phases=topology, on two brokers", async () => {
    const result = await run([
      "--phases=topology",
      "--orders=10",
      "--floor-sample=10",
      // 4.3 and 3.10 side by side: each broker's own floor and run, its version in its columns.
      "--brokers=rabbitmq,rabbitmq-2",
      `--workdir=${workdir}`,
    ]);
    expect(result.code, result.stderr.slice(-3000)).toBe(0);
    const [rows = [], ...more] = tables(result.stdout);
    // The writes by what they write are the orders' phases', which this run has none of.
    expect(more).toEqual([]);
    const [first, second] = [/^RabbitMQ 4\.\d+\.\d+ \(rabbitmq\)$/, /^RabbitMQ 3\.10\.\d+ \(rabbitmq-2\)$/];
    expect(rows[0]).toEqual([
      "phase",
      "figure",
      expect.stringMatching(first),
      expect.stringMatching(second),
      `floor ${rows[0]?.[2]}`,
      `floor ${rows[0]?.[3]}`,
      `ratio ${rows[0]?.[2]}`,
      `ratio ${rows[0]?.[3]}`,
      "target",
    ]);
    const body = rows.slice(2);
    expect(body.map((r) => r[0])).toEqual([
      "floor",
      "topology",
      "topology",
      "topology",
      "topology",
      "topology",
    ]);
    const topology = body.find((r) => r[1] === "10 Queues + Exchanges + Bindings under one vhost");
    for (const i of [2, 3]) expect(topology?.[i]).toMatch(/^[\d.]+ s, [\d.]+ objects\/s$/);
    // Each broker's own topology floor, and the run's ratio to it.
    for (const i of [4, 5]) expect(topology?.[i]).toMatch(/^[\d.]+ s at concurrency \d+/);
    for (const i of [6, 7]) expect(topology?.[i]).toMatch(/^\d+\.\d+x$/);
    expect(result.stdout).toMatch(
      /RabbitMQ 4\.\d+\.\d+ \(rabbitmq\) against RabbitMQ 3\.10\.\d+ \(rabbitmq-2\): topology alone \d+\.\d+x the objects\/s/,
    );
    expect(result.stdout).toMatch(
      /broker RabbitMQ 4\.\d+\.\d+ \(rabbitmq\) and RabbitMQ 3\.10\.\d+ \(rabbitmq-2\)/,
    );
  }, 600_000);
});
