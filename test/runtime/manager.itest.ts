// Two manager processes on the management cluster: exactly one leads; after it is killed, the
// other takes over within the lease timings; a graceful stop releases the Lease; /metrics carries
// controller-runtime's names; a watched kind the cluster does not serve does not keep it from ready.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runtimeSettings } from "../../src/runtime/process/config.ts";
import { localEnv } from "../../harness/world/env.ts";
import { freshNamespace, testCluster } from "../../harness/world/kube.ts";
import { freePort } from "../../harness/world/ports.ts";
import { until } from "./support.ts";

const entry = fileURLToPath(new URL("./fixtures/manager-main.ts", import.meta.url));
const node = fileURLToPath(new URL("../../node_modules/.bin/node", import.meta.url));
const leaseSeconds = 4;
const retrySeconds = 1;

interface Manager {
  identity: string;
  port: number;
  probePort: number;
  child: ChildProcess;
  output: string[];
  exit: Promise<number | null>;
}

const cluster = testCluster("management");
const coordination = cluster.config.makeApiClient(k8s.CoordinationV1Api);
const started: Manager[] = [];
let ns = "";

async function startManager(identity: string): Promise<Manager> {
  const port = await freePort();
  const probePort = await freePort();
  const child = spawn(
    node,
    [
      entry,
      `--leader-election-namespace=${ns}`,
      "--leader-election-id=runtime-itest",
      `--leader-election-identity=${identity}`,
      `--lease-duration=${leaseSeconds}s`,
      "--renew-deadline=3s",
      `--retry-period=${retrySeconds}s`,
      `--metrics-bind-address=127.0.0.1:${port}`,
      "--metrics-secure=false",
      `--health-probe-bind-address=127.0.0.1:${probePort}`,
      `--cluster-secret-namespace=${ns}`,
    ],
    {
      env: { ...process.env, KUBECONFIG: localEnv().KUBECONFIG, RUNTIME_ITEST_NAMESPACE: ns },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const output: string[] = [];
  child.stdout?.on("data", (d: Buffer) => output.push(...String(d).split("\n").filter(Boolean)));
  child.stderr?.on("data", (d: Buffer) => output.push(String(d)));
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const manager = { identity, port, probePort, child, output, exit };
  started.push(manager);
  return manager;
}

async function scrape(m: Manager, path = "/metrics"): Promise<{ status: number; text: string }> {
  try {
    const port = path === "/metrics" ? m.port : m.probePort;
    const response = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: response.status, text: await response.text() };
  } catch {
    return { status: 0, text: "" };
  }
}

async function leads(m: Manager): Promise<boolean> {
  const { text } = await scrape(m);
  return /^leader_election_master_status\{name="runtime-itest"\} 1$/m.test(text);
}

beforeAll(async () => {
  ns = await freshNamespace(cluster, "manager");
});

afterAll(async () => {
  for (const m of started)
    if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill("SIGKILL");
  await Promise.all(started.map((m) => m.exit));
  await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

describe("two manager processes", () => {
  it("elect exactly one leader, which reconciles, and the other takes over after a SIGKILL", async () => {
    const a = await startManager("manager-a");
    await until("manager-a to lead", () => leads(a), 30_000);
    const b = await startManager("manager-b");
    await until(
      "manager-b to serve /healthz",
      async () => (await scrape(b, "/healthz")).status === 200,
      30_000,
    );
    // b stands by for several retry periods without taking the Lease, ready all along.
    await new Promise((r) => setTimeout(r, 3 * retrySeconds * 1000));
    expect(await leads(a)).toBe(true);
    expect(await leads(b)).toBe(false);
    expect((await scrape(b, "/readyz")).status).toBe(200);
    const lease = await coordination.readNamespacedLease({ namespace: ns, name: "runtime-itest" });
    expect(lease.spec?.holderIdentity).toBe("manager-a");

    // Only the leader reconciles.
    await cluster.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "work" } } });
    await until("manager-a to reconcile", () =>
      a.output.some((l) => l.includes('"msg":"reconciled"') && l.includes('"name":"work"')),
    );
    expect(b.output.some((l) => l.includes('"msg":"reconciled"'))).toBe(false);

    const killedAt = Date.now();
    a.child.kill("SIGKILL");
    await a.exit;
    await until("manager-b to take over", () => leads(b), 30_000);
    const takeover = Date.now() - killedAt;
    // Worst case: the last renewal just before the kill is seen up to one (jittered) retry later,
    // expires a lease duration after that, and is taken on the next retry.
    expect(takeover).toBeLessThan((leaseSeconds + 2 * 1.2 * retrySeconds) * 1000 + 500);
    expect(takeover).toBeGreaterThan(1000);
    const taken = await coordination.readNamespacedLease({ namespace: ns, name: "runtime-itest" });
    expect(taken.spec?.holderIdentity).toBe("manager-b");
    expect(taken.spec?.leaseTransitions).toBe(1);
    await until("manager-b to reconcile the ConfigMap", () =>
      b.output.some((l) => l.includes('"msg":"reconciled"') && l.includes('"name":"work"')),
    );
  });

  it("serves controller-runtime's metric names and ready probes on the leader", async () => {
    const b = started.find((m) => m.identity === "manager-b")!;
    await until("readyz", async () => (await scrape(b, "/readyz")).status === 200);
    const { text } = await scrape(b);
    for (const name of [
      'controller_runtime_reconcile_total{controller="configmaps",result="success"}',
      'controller_runtime_reconcile_errors_total{controller="configmaps"} 0',
      'controller_runtime_terminal_reconcile_errors_total{controller="configmaps"} 0',
      'controller_runtime_reconcile_panics_total{controller="configmaps"} 0',
      "controller_runtime_reconcile_time_seconds_bucket{",
      // The fixture runs with the default number of workers.
      `controller_runtime_max_concurrent_reconciles{controller="configmaps"} ${runtimeSettings["max-concurrent-reconciles"].default}`,
      'controller_runtime_active_workers{controller="configmaps"}',
      'workqueue_depth{name="configmaps",controller="configmaps"}',
      'workqueue_adds_total{name="configmaps",controller="configmaps"}',
      "workqueue_queue_duration_seconds_bucket{",
      "workqueue_work_duration_seconds_bucket{",
      'workqueue_unfinished_work_seconds{name="configmaps",controller="configmaps"}',
      'workqueue_longest_running_processor_seconds{name="configmaps",controller="configmaps"}',
      'workqueue_retries_total{name="configmaps",controller="configmaps"} 0',
      'leader_election_master_status{name="runtime-itest"} 1',
      'rest_client_requests_total{method="PUT",code="200",host="127.0.0.1:',
    ]) {
      expect(text).toContain(name);
    }
    expect(text).toMatch(
      /^controller_runtime_reconcile_total\{controller="configmaps",result="success"\} [1-9]/m,
    );
  });

  it("releases the Lease on SIGTERM, after which a new manager takes it at once", async () => {
    const b = started.find((m) => m.identity === "manager-b")!;
    b.child.kill("SIGTERM");
    expect(await b.exit).toBe(0);
    expect(b.output.some((l) => l.includes("released the leader Lease"))).toBe(true);
    const released = await coordination.readNamespacedLease({ namespace: ns, name: "runtime-itest" });
    expect(released.spec?.holderIdentity ?? "").toBe("");
    // "At once": its first attempt takes the Lease. Had it found manager-b's Lease still held, it would
    // have logged that another process leads and waited for the Lease to expire.
    const c = await startManager("manager-c");
    await until("manager-c to lead", () => leads(c), 30_000);
    expect(c.output.filter((l) => l.includes("another process leads"))).toEqual([]);
    expect(c.output.some((l) => l.includes("acquired the leader Lease"))).toBe(true);
  });
});

describe("start-up configuration", () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(node, [entry, ...args], {
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += String(d)));
      child.stderr.on("data", (d: Buffer) => (stderr += String(d)));
      child.once("exit", (code) => resolve({ code, stdout, stderr }));
    });

  it("stops with a message naming a bad setting, from a flag or the environment", async () => {
    const flag = await run(["--max-concurrent-reconciles=0"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/invalid setting max-concurrent-reconciles/);
    const env = await run([], { VHOST_BROKER_RENEW_DEADLINE: "soon" });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/invalid setting renew-deadline .*VHOST_BROKER_RENEW_DEADLINE/);
  });

  it("stops with a message naming the kubeconfig and its wrong field", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vb-kubeconfig-"));
    try {
      const missing = join(dir, "missing");
      const gone = await run([`--kubeconfig=${missing}`]);
      expect(gone.code).toBe(2);
      expect(gone.stderr).toContain(`kubeconfig ${missing}: cannot be read: ENOENT`);
      const bad = join(dir, "bad");
      writeFileSync(bad, "clusters: [{name: c, cluster: {server: 6443}}]\ncurrent-context: c\n");
      const wrong = await run([`--kubeconfig=${bad}`]);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain(`kubeconfig ${bad}: clusters[0].cluster.server expected string`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("lists every setting on --help", async () => {
    const help = await run(["--help"]);
    expect(help.code).toBe(0);
    for (const name of [
      "leader-elect",
      "lease-duration",
      "max-concurrent-reconciles",
      "cluster-secret-namespace",
    ]) {
      expect(help.stdout).toContain(`--${name}, VHOST_BROKER_${name.replace(/-/g, "_").toUpperCase()}`);
    }
  });
});

/**
 * Replaces the Lease's holder. The leader renews between this read and this write at times (409):
 * then it reads again.
 */
async function takeLease(holderIdentity: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const lease = await coordination.readNamespacedLease({ namespace: ns, name: "runtime-itest" });
    try {
      await coordination.replaceNamespacedLease({
        namespace: ns,
        name: "runtime-itest",
        body: {
          ...lease,
          spec: {
            ...lease.spec,
            holderIdentity,
            leaseDurationSeconds: 3600,
            renewTime: new k8s.V1MicroTime(),
          },
        },
      });
      return;
    } catch (error) {
      if (attempt >= 5 || (error as { code?: number }).code !== 409) throw error;
    }
  }
}

describe("a leader that loses its Lease", () => {
  it("stops and exits with 1 within the renew deadline once another holder took the Lease", async () => {
    const c = started.find((m) => m.identity === "manager-c")!;
    expect(await leads(c)).toBe(true);
    // Another holder whose lease will not expire during the test.
    await takeLease("intruder");
    const since = Date.now();
    expect(await c.exit).toBe(1);
    expect(Date.now() - since).toBeLessThan(3000 + 2 * retrySeconds * 1000 + 1000);
    expect(c.output.some((l) => l.includes("lost the leader Lease"))).toBe(true);
  });
});
