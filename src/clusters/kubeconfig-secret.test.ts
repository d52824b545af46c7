import { describe, expect, it } from "vitest";
import { parseClusterSecret, parseNamespaces } from "./kubeconfig-secret.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");

function kubeconfig(user: string, cluster = "server: https://127.0.0.1:6443"): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: t
  cluster: {${cluster}}
users:
- name: u
  user:
${user}
contexts:
- name: t
  context: {cluster: t, user: u}
current-context: t
`;
}

function secret(data: Record<string, string>) {
  return { metadata: { name: "region-a", namespace: "c5c3-clusters" }, data };
}

describe("parseClusterSecret", () => {
  it("refuses a cluster that skips TLS verification unless allowed, and then warns", () => {
    const insecure = secret({
      kubeconfig: b64(
        kubeconfig("    token: abc", "server: https://127.0.0.1:6443, insecure-skip-tls-verify: true"),
      ),
    });
    expect(parseClusterSecret(insecure)).toMatchObject({
      ok: false,
      reason:
        "the kubeconfig sets insecure-skip-tls-verify; embed the cluster's CA as certificate-authority-data, or set --allow-insecure-target-clusters",
    });
    expect(parseClusterSecret(insecure, { allowInsecure: true })).toMatchObject({
      ok: true,
      warning: "the kubeconfig sets insecure-skip-tls-verify: the cluster's identity is not verified",
    });
    const verified = parseClusterSecret(secret({ kubeconfig: b64(kubeconfig("    token: abc")) }), {
      allowInsecure: true,
    });
    expect(verified.ok && verified.warning).toBe(undefined);
  });

  it("reads a token kubeconfig and the namespace scope", () => {
    const parsed = parseClusterSecret(
      secret({
        kubeconfig: b64(kubeconfig("    token: abc")),
        namespaces: b64(" tenant-a, tenant-b,,tenant-a "),
      }),
    );
    expect(parsed).toMatchObject({ ok: true, name: "region-a", namespaces: ["tenant-a", "tenant-b"] });
    if (parsed.ok) expect(parsed.config.cluster.server).toBe("https://127.0.0.1:6443");
  });

  it("refuses exec and auth-provider users with a clear reason", () => {
    const exec = parseClusterSecret(
      secret({
        kubeconfig: b64(kubeconfig("    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}")),
      }),
    );
    expect(exec).toMatchObject({
      ok: false,
      reason: 'user "u" uses exec credentials, which are not allowed',
    });
    const provider = parseClusterSecret(
      secret({ kubeconfig: b64(kubeconfig("    auth-provider: {name: gcp}")) }),
    );
    expect(provider).toMatchObject({ ok: false, reason: expect.stringContaining("auth-provider") });
  });

  it("refuses a kubeconfig that names files, which would be the operator's own", () => {
    const parsed = parseClusterSecret(
      secret({
        kubeconfig: b64(
          kubeconfig(
            "    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n    client-certificate: c.crt\n    client-key: c.key",
          ),
        ),
      }),
    );
    expect(parsed).toMatchObject({
      ok: false,
      reason:
        "the kubeconfig names files (client-certificate, client-key, tokenFile); a Secret's kubeconfig embeds them as *-data",
    });
  });

  it("names the wrong field of a kubeconfig, never its credentials", () => {
    const parsed = parseClusterSecret(
      secret({ kubeconfig: b64(kubeconfig("    token: s3cr3t\n    client-key-data: s3cr3t!")) }),
    );
    expect(parsed).toMatchObject({
      ok: false,
      reason: "the kubeconfig: users[0].user.client-key-data is not base64",
    });
  });

  it("refuses a Secret without a usable kubeconfig", () => {
    expect(parseClusterSecret(secret({}))).toMatchObject({
      ok: false,
      reason: "the Secret has no kubeconfig key",
    });
    expect(parseClusterSecret(secret({ kubeconfig: b64("{not yaml") }))).toMatchObject({ ok: false });
  });

  it("changes its fingerprint when the kubeconfig or the namespaces change, only then", () => {
    const a = parseClusterSecret(secret({ kubeconfig: b64(kubeconfig("    token: a")) }));
    const same = parseClusterSecret(secret({ kubeconfig: b64(kubeconfig("    token: a")) }));
    const other = parseClusterSecret(secret({ kubeconfig: b64(kubeconfig("    token: b")) }));
    const scoped = parseClusterSecret(
      secret({ kubeconfig: b64(kubeconfig("    token: a")), namespaces: b64("x") }),
    );
    expect(same.fingerprint).toBe(a.fingerprint);
    expect(other.fingerprint).not.toBe(a.fingerprint);
    expect(scoped.fingerprint).not.toBe(a.fingerprint);
  });
});

describe("parseNamespaces", () => {
  it("treats an empty list as no scope", () => {
    expect(parseNamespaces(undefined)).toBeUndefined();
    expect(parseNamespaces(" , ")).toBeUndefined();
  });
});
