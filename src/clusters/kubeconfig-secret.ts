import { createHash } from "node:crypto";
import type { KubeObject } from "../runtime/port/kube-rest.ts";
import { KubeconfigError, parseKubeconfig, type Kubeconfig } from "../runtime/port/kubeconfig.ts";

// How a kubeconfig Secret registers a target cluster (the multicluster-runtime convention): the
// Secret's name is the cluster's name, key `kubeconfig` holds the kubeconfig, optional key
// `namespaces` (comma separated) limits the caches on that cluster.

export const clusterSecretLabel = "sigs.k8s.io/multicluster-runtime-kubeconfig";

export type ParsedClusterSecret =
  | {
      ok: true;
      name: string;
      config: Kubeconfig;
      namespaces: string[] | undefined;
      fingerprint: string;
      /** The kubeconfig skips TLS verification, and the setting allows it: a warning to show. */
      warning?: string;
    }
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
 * the operator would run code or reach services chosen by whoever can write the Secret. So are
 * files: they would be the operator's own (its service-account token sent to any server). So is a
 * cluster that skips TLS verification, unless `allowInsecure` (anyone on the path could pose as it and
 * receive the orders' credentials); allowed, it carries a warning.
 */
export function parseClusterSecret(
  secret: KubeObject,
  options: { allowInsecure?: boolean } = {},
): ParsedClusterSecret {
  const name = secret.metadata?.name ?? "";
  const data = secret.data as Record<string, string> | undefined;
  const text = decode(data, "kubeconfig");
  const fingerprint = createHash("sha256")
    .update(JSON.stringify([data?.kubeconfig ?? "", data?.namespaces ?? ""]))
    .digest("hex");
  const refuse = (reason: string): ParsedClusterSecret => ({ ok: false, name, reason, fingerprint });
  if (!text) return refuse("the Secret has no kubeconfig key");
  let config: Kubeconfig;
  try {
    config = parseKubeconfig(text, "the kubeconfig");
  } catch (error) {
    if (error instanceof KubeconfigError) return refuse(error.message);
    throw error;
  }
  const { cluster, user } = config;
  if (user.exec) return refuse(`user "${user.name}" uses exec credentials, which are not allowed`);
  if (user.authProvider) return refuse(`user "${user.name}" uses an auth-provider, which is not allowed`);
  const files = [
    cluster.certificateAuthority && "certificate-authority",
    user.clientCertificate && "client-certificate",
    user.clientKey && "client-key",
    user.tokenFile && "tokenFile",
  ].filter((f) => f);
  if (files.length > 0) {
    return refuse(
      `the kubeconfig names files (${files.join(", ")}); a Secret's kubeconfig embeds them as *-data`,
    );
  }
  const insecure = cluster.insecureSkipTlsVerify;
  if (insecure && !options.allowInsecure) {
    return refuse(
      "the kubeconfig sets insecure-skip-tls-verify; embed the cluster's CA as certificate-authority-data, or set --allow-insecure-target-clusters",
    );
  }
  return {
    ok: true,
    name,
    config,
    namespaces: parseNamespaces(decode(data, "namespaces")),
    fingerprint,
    ...(insecure
      ? { warning: "the kubeconfig sets insecure-skip-tls-verify: the cluster's identity is not verified" }
      : {}),
  };
}
