import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import * as k8s from "@kubernetes/client-node";
import { loadKubeconfigFiles, type Kubeconfig } from "../../src/runtime/port/kubeconfig.ts";
import { waitUntilServed } from "./managed-bus.ts";
import { localEnv } from "./env.ts";

export type ClusterName = "management" | "target";

export interface TestCluster {
  name: ClusterName;
  config: k8s.KubeConfig;
  /** The same file as the operator reads it. */
  kubeconfig: Kubeconfig;
  core: k8s.CoreV1Api;
  objects: k8s.KubernetesObjectApi;
  extensions: k8s.ApiextensionsV1Api;
}

export function testCluster(name: ClusterName): TestCluster {
  const env = localEnv();
  const path = name === "management" ? env.KUBECONFIG : env.TARGET_KUBECONFIG;
  const config = new k8s.KubeConfig();
  config.loadFromFile(path);
  return {
    name,
    config,
    kubeconfig: loadKubeconfigFiles([path]),
    core: config.makeApiClient(k8s.CoreV1Api),
    objects: k8s.KubernetesObjectApi.makeApiClient(config),
    extensions: config.makeApiClient(k8s.ApiextensionsV1Api),
  };
}

/** A fresh namespace for one test file; tests never share names, so runs never collide. */
export async function freshNamespace(
  cluster: TestCluster,
  prefix: string,
  labels?: Record<string, string>,
): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  await cluster.core.createNamespace({ body: { metadata: { name, ...(labels ? { labels } : {}) } } });
  return name;
}

/** The label of a namespace whose pods Pod Security admits only at the "restricted" level. */
export const RESTRICTED = { "pod-security.kubernetes.io/enforce": "restricted" };

/** Polls until `check` returns a value other than undefined, or fails naming what it waited for. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Reads CRDs from a YAML file into client-node's typed models. The typed models matter: client-node
 * serializes a known kind through its model, which knows `x_kubernetes_validations` but would drop a raw
 * `x-kubernetes-validations` key, so CRDs must not be passed as plain parsed YAML.
 */
export function loadCrdFile(path: string): k8s.V1CustomResourceDefinition[] {
  return k8s.loadAllYaml(readFileSync(path, "utf8")) as k8s.V1CustomResourceDefinition[];
}

/** Installs (or updates) a CRD, typed as `loadCrdFile` returns it, and waits until it is served. */
export async function installCrd(cluster: TestCluster, crd: k8s.V1CustomResourceDefinition): Promise<void> {
  await cluster.objects.patch(
    { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", ...crd },
    undefined,
    undefined,
    "vhost-broker-tests",
    true,
    k8s.PatchStrategy.ServerSideApply,
  );
  await waitUntilServed(cluster.config, crd);
}

export function isApiError(error: unknown, code: number): boolean {
  return error instanceof k8s.ApiException && error.code === code;
}
