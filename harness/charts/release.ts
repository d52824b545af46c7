// deploy/vhost-broker installed for real with `helm install` on the management cluster, and a token of
// the chart's ServiceAccount (TokenRequest), for the tests that run the operator with exactly the chart's
// RBAC. CRDs stay out of the release (crds.install=false): they are shared by every test on the cluster.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { OperatorProcess } from "../operator/operator-process.ts";
import { RecordingProxy } from "../world/recording-proxy.ts";
import { localEnv } from "../world/env.ts";
import { freshNamespace, type TestCluster } from "../world/kube.ts";
import { helmBinary } from "./helm.ts";

const run = promisify(execFile);
const chart = fileURLToPath(new URL("../../deploy/vhost-broker", import.meta.url));

export interface Release {
  name: string;
  namespace: string;
  /** The name of the release's objects (Deployment, ServiceAccount, ClusterRole, Lease). */
  fullname: string;
}

/** `helm install` of a fresh release in a fresh namespace. */
export async function installRelease(
  cluster: TestCluster,
  prefix: string,
  set: Record<string, string>,
): Promise<Release> {
  const helm = helmBinary();
  if (!helm) throw new Error("helm is not built; run scripts/localenv.sh up");
  const namespace = await freshNamespace(cluster, prefix);
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  const args = ["install", name, chart, "--namespace", namespace, "--kubeconfig", localEnv().KUBECONFIG];
  for (const [key, value] of Object.entries({ "crds.install": "false", ...set })) {
    args.push("--set", `${key}=${value}`);
  }
  await run(helm, args);
  return { name, namespace, fullname: `${name}-vhost-broker` };
}

/** `helm uninstall`, then the namespace. */
export async function uninstallRelease(cluster: TestCluster, release: Release | undefined): Promise<void> {
  if (!release) return;
  const helm = helmBinary() ?? "helm";
  await run(helm, [
    "uninstall",
    release.name,
    "--namespace",
    release.namespace,
    "--kubeconfig",
    localEnv().KUBECONFIG,
  ]);
  await cluster.core.deleteNamespace({ name: release.namespace }).catch(() => undefined);
}

/** A token of the release's ServiceAccount, as the kubelet would mount it. */
export async function serviceAccountToken(cluster: TestCluster, release: Release): Promise<string> {
  const request = await cluster.core.createNamespacedServiceAccountToken({
    name: release.fullname,
    namespace: release.namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error("the TokenRequest returned no token");
  return token;
}

/**
 * A kubeconfig holding only the token, in a fresh folder; `remove` deletes the folder. `server` replaces
 * the management API server's address (a recording proxy in front of it).
 */
export function tokenKubeconfig(token: string, server?: string): { path: string; remove: () => void } {
  const dir = mkdtempSync(`${tmpdir()}/vhost-broker-token-`);
  const management = readFileSync(localEnv().KUBECONFIG, "utf8");
  server ??= /server: (\S+)/.exec(management)?.[1];
  const ca = /certificate-authority: (\S+)/.exec(management)?.[1];
  if (!server || !ca) throw new Error("cannot read the management kubeconfig's server and CA");
  const path = `${dir}/kubeconfig`;
  writeFileSync(
    path,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters: [{name: management, cluster: {server: " + server + ", certificate-authority: " + ca + "}}]",
      "users: [{name: operator, user: {token: " + token + "}}]",
      "contexts: [{name: operator, context: {cluster: management, user: operator}}]",
      "current-context: operator",
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ReleaseRun {
  operator: OperatorProcess;
  /** The recording proxy in front of the API server, when asked for. */
  api: RecordingProxy | undefined;
  /** Ends the proxy and removes the kubeconfig; the operator is the caller's to stop. */
  close(): Promise<void>;
}

/**
 * The operator as the release's Deployment runs it: with nothing but a token of its ServiceAccount, and
 * leader election on with the release's Lease. With `recorded`, the API server is reached through a
 * recording proxy that goes on with that token, so the API server still authorizes the chart's account.
 */
export async function runAsRelease(
  cluster: TestCluster,
  release: Release,
  options: { args?: string[]; env?: Record<string, string>; recorded?: boolean } = {},
): Promise<ReleaseRun> {
  const api = options.recorded ? await RecordingProxy.kubeApi({ credentials: "client" }) : undefined;
  const kubeconfig = tokenKubeconfig(
    await serviceAccountToken(cluster, release),
    api && `https://127.0.0.1:${api.port}`,
  );
  const close = async () => {
    await api?.close();
    kubeconfig.remove();
  };
  try {
    const operator = await OperatorProcess.start({
      kubeconfig: kubeconfig.path,
      args: [
        "--leader-elect=true",
        `--leader-election-namespace=${release.namespace}`,
        `--leader-election-id=${release.fullname}`,
        ...(options.args ?? []),
      ],
      ...(options.env && { env: options.env }),
    });
    return { operator, api, close };
  } catch (error) {
    await close();
    throw error;
  }
}
