// docs/install.md's OpenBao steps, run in bash as a person pastes them, against the local OpenBao and the
// management cluster: the KV v2 mount and the policy, Kubernetes auth for an OpenBao outside the cluster
// (the reviewer account, its token, the cluster's CA), and the role. Then the operator's account logs in
// with a projected token of the audience the chart mounts, and may write and describe a backup path
// but not one beside it. What this run changes in the page's text is only what the shared OpenBao and
// cluster need apart (the `substitutions` below): a mount, an auth path, a policy, a namespace and a
// binding of this run's own, and the API server's address as OpenBao reaches it.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baoBinary } from "../../harness/world/bao.ts";
import { localEnv } from "../../harness/world/env.ts";
import { freshNamespace, testCluster } from "../../harness/world/kube.ts";

const run = promisify(execFile);
const env = localEnv();
const cluster = testCluster("management");
const id = randomBytes(3).toString("hex");
const mount = `itest-install-${id}`;
const authPath = `itest-install-${id}`;
const policy = `vhost-broker-itest-${id}`;
const binding = `openbao-reviewer-${id}`;

/** The `sh` blocks of the page's OpenBao section that an OpenBao outside the cluster takes, in order. */
function openBaoSteps(): string[] {
  const page = readFileSync(fileURLToPath(new URL("../../docs/install.md", import.meta.url)), "utf8");
  const start = page.indexOf("\n## 3. OpenBao\n");
  const section = page.slice(start, page.indexOf("\n## ", start + 1));
  const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? "");
  const pick = (marker: string) => {
    const block = blocks.find((b) => b.includes(marker));
    if (!block) throw new Error(`docs/install.md's OpenBao section has no block with ${marker}`);
    return block;
  };
  return [pick("bao policy write"), pick("token_reviewer_jwt"), pick("/role/vhost-broker")];
}

/** A call to OpenBao's HTTP API with `token`; the status and the JSON answer. */
async function bao(token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${env.BAO_ADDR}/v1/${path}`, {
    method,
    headers: { "X-Vault-Token": token, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
}

describe("docs/install.md's OpenBao steps, run as written", () => {
  let namespace = "";
  let workdir = "";

  beforeAll(async () => {
    namespace = await freshNamespace(cluster, "vb-install-bao");
    workdir = mkdtempSync(join(tmpdir(), "vb-install-bao-"));
    symlinkSync(baoBinary(), join(workdir, "bao"));
    symlinkSync(env.KUBECTL, join(workdir, "kubectl"));
  });

  afterAll(async () => {
    await bao(env.BAO_TOKEN, "DELETE", `sys/mounts/${mount}`).catch(() => undefined);
    await bao(env.BAO_TOKEN, "DELETE", `sys/auth/${authPath}`).catch(() => undefined);
    await bao(env.BAO_TOKEN, "DELETE", `sys/policies/acl/${policy}`).catch(() => undefined);
    await cluster.config
      .makeApiClient(k8s.RbacAuthorizationV1Api)
      .deleteClusterRoleBinding({ name: binding })
      .catch(() => undefined);
    if (namespace) await cluster.core.deleteNamespace({ name: namespace }).catch(() => undefined);
    if (workdir) rmSync(workdir, { recursive: true, force: true });
  });

  it("mounts KV v2, writes the policy and Kubernetes auth, and the operator's account may back up", async () => {
    const server = cluster.config.getCurrentCluster()?.server ?? "";
    const substitutions: [RegExp, string][] = [
      [/^MOUNT=kv-v2$/m, `MOUNT=${mount}`],
      [/bao auth enable kubernetes/g, `bao auth enable -path=${authPath} kubernetes`],
      [/auth\/kubernetes\//g, `auth/${authPath}/`],
      [/policy write vhost-broker /g, `policy write ${policy} `],
      [/policies=vhost-broker /g, `policies=${policy} `],
      [/clusterrolebinding openbao-reviewer /g, `clusterrolebinding ${binding} `],
      [/vhost-broker-system/g, namespace],
      [/https:\/\/api\.management\.example:6443/g, server],
    ];
    const script = substitutions.reduce(
      (text, [from, to]) => text.replace(from, to),
      openBaoSteps().join("\n"),
    );
    await run("bash", ["-euo", "pipefail", "-c", script], {
      cwd: workdir,
      env: {
        PATH: `${workdir}:${process.env.PATH ?? ""}`,
        HOME: workdir,
        KUBECONFIG: env.KUBECONFIG,
        BAO_ADDR: env.BAO_ADDR,
        BAO_TOKEN: env.BAO_TOKEN,
      },
      timeout: 60_000,
    });

    // The operator's account, and a token as the chart projects it (audience openbao).
    await cluster.core.createNamespacedServiceAccount({
      namespace,
      body: { metadata: { name: "vhost-broker" } },
    });
    const review = await cluster.core.createNamespacedServiceAccountToken({
      namespace,
      name: "vhost-broker",
      body: { spec: { audiences: ["openbao"], expirationSeconds: 600 } },
    });
    const jwt = review.status?.token ?? "";
    const login = await bao("", "POST", `auth/${authPath}/login`, { role: "vhost-broker", jwt });
    expect(login.status, JSON.stringify(login.body?.["errors"])).toBe(200);
    const token = (login.body["auth"] as { client_token: string }).client_token;

    const path = "openstack/rabbitmq/openstack/order-vhost/credentials";
    const written = await bao(token, "POST", `${mount}/data/${path}`, { data: { username: "u" } });
    expect(written.status).toBe(200);
    const described = await bao(token, "POST", `${mount}/metadata/${path}`, {
      custom_metadata: { "managed-by": "vhost-broker" },
    });
    expect(described.status).toBe(204);
    expect((await bao(token, "GET", `${mount}/data/${path}`)).status).toBe(200);
    const beside = await bao(token, "POST", `${mount}/data/openstack/other/x`, { data: { a: "b" } });
    expect(beside.status).toBe(403);
  });
});
