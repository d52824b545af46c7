// Shared pieces of the admission corpus: install a kind's CRD, run a table of cases against the real
// kube-apiserver, and read back what it stored. A case is admitted, or refused with every expected text.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { expect } from "vitest";
import { crdPath } from "../../src/api/crds.ts";
import type { KindRef } from "../../src/api/index.ts";
import { localEnv } from "./env.ts";
import { installCrd, loadCrdFile, type TestCluster } from "./kube.ts";

export type Obj = {
  apiVersion: string;
  kind: string;
  metadata: k8s.V1ObjectMeta;
  spec?: unknown;
  status?: unknown;
};

/** "admitted", or the words the refusal must contain. */
export type Expectation = "admitted" | string[];

export async function installKind(cluster: TestCluster, ref: KindRef): Promise<void> {
  const [crd] = loadCrdFile(crdPath(`${ref.plural}.${ref.group}`));
  if (!crd) throw new Error(`no CRD for ${ref.kind}`);
  await installCrd(cluster, crd);
}

/** The API server's message for a refused request, or "admitted". */
export async function outcome(request: Promise<unknown>): Promise<string> {
  try {
    await request;
    return "admitted";
  } catch (error) {
    if (!(error instanceof k8s.ApiException)) throw error;
    const body = error.body as unknown;
    const parsed =
      typeof body === "string" ? (JSON.parse(body) as { message?: string }) : (body as { message?: string });
    return `refused (${error.code}): ${parsed?.message ?? String(body)}`;
  }
}

export function expectOutcome(actual: string, expected: Expectation): void {
  if (expected === "admitted") {
    expect(actual).toBe("admitted");
    return;
  }
  expect(actual).toMatch(/^refused \(422\)/);
  for (const text of expected) expect(actual).toContain(text);
}

export function custom(cluster: TestCluster): k8s.CustomObjectsApi {
  return cluster.config.makeApiClient(k8s.CustomObjectsApi);
}

export function create(cluster: TestCluster, ref: KindRef, namespace: string, object: Obj): Promise<unknown> {
  return custom(cluster).createNamespacedCustomObject({
    group: ref.group,
    version: ref.version,
    plural: ref.plural,
    namespace,
    body: object,
  });
}

export async function read(
  cluster: TestCluster,
  ref: KindRef,
  namespace: string,
  name: string,
): Promise<Obj> {
  return (await custom(cluster).getNamespacedCustomObject({
    group: ref.group,
    version: ref.version,
    plural: ref.plural,
    namespace,
    name,
  })) as Obj;
}

/** Reads the object, lets `change` edit its spec, and writes it back with an update (PUT). */
export async function update(
  cluster: TestCluster,
  ref: KindRef,
  namespace: string,
  name: string,
  change: (spec: Record<string, unknown>) => void,
): Promise<unknown> {
  const current = await read(cluster, ref, namespace, name);
  const spec = structuredClone(current.spec) as Record<string, unknown>;
  change(spec);
  return custom(cluster).replaceNamespacedCustomObject({
    group: ref.group,
    version: ref.version,
    plural: ref.plural,
    namespace,
    name,
    body: { ...current, spec },
  });
}

/** Writes the status subresource with a merge patch. */
export function patchStatus(
  cluster: TestCluster,
  ref: KindRef,
  namespace: string,
  name: string,
  status: unknown,
): Promise<unknown> {
  return custom(cluster).patchNamespacedCustomObjectStatus(
    { group: ref.group, version: ref.version, plural: ref.plural, namespace, name, body: { status } },
    k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
  );
}

/** Runs kubectl against a local cluster; `input` is piped to its stdin. */
export async function kubectl(cluster: TestCluster, args: string[], input?: string): Promise<string> {
  const env = localEnv();
  const kubeconfig = cluster.name === "management" ? env.KUBECONFIG : env.TARGET_KUBECONFIG;
  const run = promisify(execFile);
  const child = run(env.KUBECTL, ["--kubeconfig", kubeconfig, ...args], { timeout: 60_000 });
  child.child.stdin?.end(input ?? "");
  return (await child).stdout;
}
