// The helm binary of the local environment and `helm template` of a chart in deploy/, for the chart tests
// and the multicluster end-to-end tests. `scripts/localenv.sh up` builds helm and exports HELM.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import * as yaml from "yaml";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const helmVersion = "v3.22.0";

/** HELM from the environment or from .localenv/env.sh, else the cache `up` builds it into; undefined if none. */
export function helmBinary(): string | undefined {
  const state = process.env.LOCALENV_STATE ?? `${root}.localenv`;
  const fromEnvFile = existsSync(`${state}/env.sh`)
    ? /^export HELM=(.+)$/m.exec(readFileSync(`${state}/env.sh`, "utf8"))?.[1]
    : undefined;
  const cache = process.env.VHOST_BROKER_CACHE ?? `${homedir()}/.cache/vhost-broker`;
  const candidates = [process.env.HELM, fromEnvFile, `${cache}/helm/${helmVersion}/helm`];
  return candidates.find((c): c is string => !!c && existsSync(c));
}

/**
 * The local clusters' Kubernetes version, for `helm template --kube-version`: helm built from source
 * (as the environment builds it) assumes v1.20.0 without a cluster, older than the charts' kubeVersion.
 */
export function localKubeVersion(): string | undefined {
  const file = `${process.env.LOCALENV_STATE ?? `${root}.localenv`}/kubernetes-version`;
  return existsSync(file) ? readFileSync(file, "utf8").trim() || undefined : undefined;
}

export interface RenderOptions {
  release: string;
  namespace: string;
  /** `--set` values, e.g. { "assignedNamespaces": "{a,b}" }. */
  set?: Record<string, string>;
  /** A values file's content, with its YAML types (booleans, numbers) as given. */
  values?: Record<string, unknown>;
  includeCrds?: boolean;
}

export interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [key: string]: unknown;
}

/** `helm template` of deploy/<chart>: the manifest text. */
export async function renderChart(chart: string, options: RenderOptions): Promise<string> {
  const helm = helmBinary();
  if (!helm) throw new Error("helm is not built; run scripts/localenv.sh up");
  const args = ["template", options.release, `${root}deploy/${chart}`, "--namespace", options.namespace];
  for (const [key, value] of Object.entries(options.set ?? {})) args.push("--set", `${key}=${value}`);
  if (options.includeCrds) args.push("--include-crds");
  const kubeVersion = localKubeVersion();
  if (kubeVersion) args.push("--kube-version", kubeVersion);
  const dir = options.values ? mkdtempSync(`${tmpdir()}/vhost-broker-values-`) : undefined;
  try {
    if (dir) {
      writeFileSync(`${dir}/values.yaml`, yaml.stringify(options.values));
      args.push("--values", `${dir}/values.yaml`);
    }
    const { stdout } = await run(helm, args, { maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/** The manifest's objects (empty documents dropped). */
export function manifestObjects(manifest: string): RenderedObject[] {
  return yaml
    .parseAllDocuments(manifest)
    .map((d) => d.toJS() as RenderedObject | null)
    .filter((o): o is RenderedObject => o !== null && typeof o === "object" && "kind" in o);
}

/**
 * `kubectl apply --server-side --dry-run=server` of a manifest (into `namespace`, when given): what the
 * API server would admit, and its warnings.
 */
export async function dryRunManifest(
  kubectl: string,
  kubeconfig: string,
  manifest: string,
  namespace?: string,
): Promise<{ stdout: string; stderr: string }> {
  const args = [
    `--kubeconfig=${kubeconfig}`,
    "apply",
    "--server-side",
    "--dry-run=server",
    "--force-conflicts",
  ];
  const where = namespace === undefined ? [] : ["-n", namespace];
  const child = run(kubectl, [...args, "--field-manager=vhost-broker-tests", ...where, "-f", "-"]);
  child.child.stdin?.end(manifest);
  const { stdout, stderr } = await child;
  return { stdout, stderr };
}

/** `kubectl apply --server-side` of a manifest, as the kubeconfig's user. */
export async function applyManifest(kubectl: string, kubeconfig: string, manifest: string): Promise<void> {
  const args = [`--kubeconfig=${kubeconfig}`, "apply", "--server-side", "--force-conflicts"];
  const child = run(kubectl, [...args, "--field-manager=vhost-broker-tests", "-f", "-"]);
  child.child.stdin?.end(manifest);
  await child;
}
