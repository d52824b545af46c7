import { createHash } from "node:crypto";
import * as k8s from "@kubernetes/client-node";
import type { KubeObject } from "../runtime/kube-rest.ts";

// How a kubeconfig Secret registers a target cluster (the multicluster-runtime convention): the
// Secret's name is the cluster's name, key `kubeconfig` holds the kubeconfig, optional key
// `namespaces` (comma separated) limits the caches on that cluster.

export const clusterSecretLabel = "sigs.k8s.io/multicluster-runtime-kubeconfig";

export type ParsedClusterSecret =
  | { ok: true; name: string; config: k8s.KubeConfig; namespaces: string[] | undefined; fingerprint: string }
  | { ok: false; name: string; reason: string; fingerprint: string };

function decode(data: Record<string, string> | undefined, key: string): string | undefined {
  const value = data?.[key];
  return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8");
}

export function parseNamespaces(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const list = text
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  return list.length > 0 ? [...new Set(list)] : undefined;
}

/**
 * Reads a cluster Secret. Users that run a program (exec) or call a cloud auth provider are refused:
 * the operator would run code or reach services chosen by whoever can write the Secret.
 */
export function parseClusterSecret(secret: KubeObject): ParsedClusterSecret {
  const name = secret.metadata?.name ?? "";
  const data = secret.data as Record<string, string> | undefined;
  const text = decode(data, "kubeconfig");
  const fingerprint = createHash("sha256")
    .update(JSON.stringify([data?.kubeconfig ?? "", data?.namespaces ?? ""]))
    .digest("hex");
  const refuse = (reason: string): ParsedClusterSecret => ({ ok: false, name, reason, fingerprint });
  if (!text) return refuse("the Secret has no kubeconfig key");
  const config = new k8s.KubeConfig();
  try {
    config.loadFromString(text);
  } catch (error) {
    return refuse(
      `the kubeconfig cannot be read: ${error instanceof Error ? error.message.split("\n")[0] : "invalid"}`,
    );
  }
  const user = config.getCurrentUser();
  if (!config.getCurrentCluster()) return refuse("the kubeconfig has no current cluster");
  if (user?.exec) return refuse(`user "${user.name}" uses exec credentials, which are not allowed`);
  if (user?.authProvider) return refuse(`user "${user.name}" uses an auth-provider, which is not allowed`);
  return { ok: true, name, config, namespaces: parseNamespaces(decode(data, "namespaces")), fingerprint };
}
