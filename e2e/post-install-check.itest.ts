// `vhost-broker check`, what the chart's `helm test` runs, as a process against the local environment,
// with nothing but a token of the chart's check account (templates/tests/check.yaml's ServiceAccount,
// Role and RoleBinding, applied in a fresh release namespace): red while no replica has led, green once
// an operator process leads on the release's Lease, red again once it stepped down; and red naming each
// missing CRD on a cluster that lacks the operator's kinds (the target cluster).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyManifest, manifestObjects, renderChart } from "../harness/charts/helm.ts";
import { tokenKubeconfig } from "../harness/charts/release.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import { localEnv } from "../harness/world/env.ts";
import { freshNamespace, testCluster } from "../harness/world/kube.ts";
import { installCrds } from "../harness/world/managed-bus.ts";
import { checkedKinds, resourceName } from "../src/operator/check/verdict.ts";
import { microTime } from "../src/runtime/base/micro-time.ts";

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const RELEASE = "vb";
const LEASE = "vb-vhost-broker";
const ACCOUNT = "vb-vhost-broker-check";

interface CheckRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** `node src/main.ts check` with these flags, as the image runs it; resolves when it exits. */
function check(flags: string[]): Promise<CheckRun> {
  const started = Date.now();
  // The check's settings come from its flags alone, not from this process's VHOST_BROKER_*.
  const env = Object.fromEntries(Object.entries(process.env).filter(([n]) => !n.startsWith("VHOST_BROKER_")));
  const child = spawn(process.execPath, [main, "check", ...flags], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

const failedLines = (run: CheckRun) =>
  run.stderr.split("\n").filter((l) => l.startsWith("vhost-broker check: failed: "));

describe("vhost-broker check with the chart's check account", () => {
  const cluster = testCluster("management");
  let namespace = "";
  let kubeconfig: { path: string; remove: () => void } | undefined;
  let operator: OperatorProcess | undefined;
  const flags = (timeout: string) => [
    `--kubeconfig=${kubeconfig?.path ?? ""}`,
    `--leader-election-namespace=${namespace}`,
    `--leader-election-id=${LEASE}`,
    `--check-timeout=${timeout}`,
  ];

  beforeAll(async () => {
    await installCrds(cluster.config);
    namespace = await freshNamespace(cluster, "vb-check");
    // The account as a release in that namespace has it; the Pod is the test hook, not applied here.
    const manifest = await renderChart("vhost-broker", {
      release: RELEASE,
      namespace,
      set: { "settings.openbao-address": localEnv().BAO_ADDR },
    });
    const account = manifestObjects(manifest).filter((o) => o.metadata.name === ACCOUNT && o.kind !== "Pod");
    expect(account.map((o) => o.kind)).toEqual(["ServiceAccount", "Role", "RoleBinding"]);
    const { KUBECTL, KUBECONFIG } = localEnv();
    await applyManifest(KUBECTL, KUBECONFIG, account.map((o) => JSON.stringify(o)).join("\n---\n"));
    const request = await cluster.core.createNamespacedServiceAccountToken({
      name: ACCOUNT,
      namespace,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    kubeconfig = tokenKubeconfig(request.status?.token ?? "");
  });

  afterAll(async () => {
    await operator?.stop();
    kubeconfig?.remove();
    if (namespace) await cluster.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it("fails while no replica of the operator has led, naming the Lease and nothing else", async () => {
    const run = await check(flags("3s"));
    console.log(`check without a Lease: exit ${run.code} in ${run.ms} ms`);
    expect(run.code, run.stderr).toBe(1);
    expect(failedLines(run)).toEqual([
      `vhost-broker check: failed: Lease ${namespace}/${LEASE} does not exist: no replica of the operator has led`,
    ]);
    // It tried again within its timeout, and said what it waited for.
    expect(run.stdout).toContain(`vhost-broker check: waiting: Lease ${namespace}/${LEASE} does not exist`);
    expect(run.ms).toBeGreaterThanOrEqual(2_000);
  });

  it("passes once an operator process leads on the release's Lease", async () => {
    operator = await OperatorProcess.start({
      args: [
        "--leader-elect=true",
        `--leader-election-namespace=${namespace}`,
        `--leader-election-id=${LEASE}`,
        "--leader-election-identity=check-leader",
      ],
    });
    // Started right after the operator, as helm test may be after an install: it waits for the Lease.
    const run = await check(flags("60s"));
    console.log(`check with a leader: exit ${run.code} in ${run.ms} ms\n${run.stdout}`);
    expect(run.code, run.stderr).toBe(0);
    const kinds = checkedKinds({
      "topology-controller": true,
      "sql-controller": false,
      "mariadb-orders": false,
    });
    expect(run.stdout).toMatch(
      new RegExp(
        `vhost-broker check: passed: ${kinds.length} kinds served and listable in ${namespace}; Lease ${namespace}/${LEASE} held by check-leader, renewed \\d+s ago\\n$`,
      ),
    );
    expect(await operator.leading()).toBe(true);
  }, 180_000);

  it("fails once the leader stepped down and no replica leads", async () => {
    expect(await operator?.stop()).toBe(0);
    operator = undefined;
    const run = await check(flags("3s"));
    expect(run.code, run.stderr).toBe(1);
    expect(failedLines(run)).toEqual([
      `vhost-broker check: failed: Lease ${namespace}/${LEASE} has no holder: no replica of the operator leads`,
    ]);
  });
});

describe("vhost-broker check on a cluster without the operator's CRDs", () => {
  const target = testCluster("target");
  let namespace = "";

  beforeAll(async () => {
    namespace = await freshNamespace(target, "vb-check");
    // A Lease renewed just now, so that only the kinds fail (applied as JSON: its times are MicroTime).
    const lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: LEASE, namespace },
      spec: { holderIdentity: "elsewhere", leaseDurationSeconds: 60, renewTime: microTime(Date.now()) },
    };
    await applyManifest(localEnv().KUBECTL, localEnv().TARGET_KUBECONFIG, JSON.stringify(lease));
  });
  afterAll(async () => {
    if (namespace) await target.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it("fails with one line per kind whose CRD is missing", async () => {
    const installed = new Set(
      (await target.extensions.listCustomResourceDefinition()).items.map((c) => c.metadata?.name ?? ""),
    );
    const kinds = checkedKinds({
      "topology-controller": true,
      "sql-controller": false,
      "mariadb-orders": false,
    });
    const missing = kinds.map(resourceName).filter((name) => !installed.has(name));
    // The target cluster never gets the ControlPlane's CRD (deploy/target-cluster-access ships none).
    expect(missing).toContain("controlplanes.c5c3.io");
    const run = await check([
      `--kubeconfig=${localEnv().TARGET_KUBECONFIG}`,
      `--leader-election-namespace=${namespace}`,
      `--leader-election-id=${LEASE}`,
      "--check-timeout=3s",
    ]);
    expect(run.code, run.stderr).toBe(1);
    const lines = failedLines(run);
    expect(lines).toHaveLength(missing.length);
    for (const name of missing) {
      expect(
        lines.some((l) => l.endsWith(`the CRD ${name} is missing or not established`)),
        name,
      ).toBe(true);
    }
  });
});
