// The OpenBao backup under Kubernetes auth, against the real local OpenBao and the real management
// kube-apiserver: OpenBao verifies the operator's service-account token with a TokenReview on the
// apiserver, and the store logs in with it. Every setup step is done here with plain fetch (OpenBao) and
// client-node (Kubernetes), so the store under test is the only Kubernetes-auth client involved; what the
// store writes is checked through OpenBao's own HTTP API with the root token.
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBaoStore } from "../../src/backup/openbao.ts";
import { BackupError, backUp, isStoreUnavailable, type CredentialStore } from "../../src/backup/store.ts";
import { scrub } from "../../src/runtime/base/redact.ts";
import { localEnv } from "../../harness/world/env.ts";
import { credentials, everything, failure, owner, password } from "./fixtures.ts";
import { freshNamespace, isApiError, testCluster } from "../../harness/world/kube.ts";

const env = localEnv();
const cluster = testCluster("management");
const rbac = cluster.config.makeApiClient(k8s.RbacAuthorizationV1Api);

const run = randomBytes(4).toString("hex");
const mountPath = `itest-k8s-${run}`;
const role = `vhost-broker-${run}`;
const policy = `itest-k8s-auth-${run}`;
const bindingName = `itest-openbao-token-reviewer-${run}`;
/** The only KV area the role's policy allows. */
const prefix = `itest/k8s-auth-${run}`;
/** A KV area the policy does not cover. */
const outside = `itest/k8s-auth-outside-${run}`;

const operatorAccount = "vhost-broker";
const reviewerAccount = "openbao-token-reviewer";
/** Lives in the bound namespace but is not one of the role's bound service-account names. */
const strangerAccount = "stranger";

let namespace: string | undefined;
let bindingCreated = false;
let tokenDir: string | undefined;
/** Every JWT this file holds, so that no error message and no assertion output can show one. */
const jwts: string[] = [];
let operatorJwt = "";
let operatorTokenFile = "";
let strangerTokenFile = "";
let store: CredentialStore;

/** One call to OpenBao's HTTP API with the root token; a refusal names the call and OpenBao's errors only. */
async function bao(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${env.BAO_ADDR}/v1/${path}`, {
    method,
    headers: { "X-Vault-Token": env.BAO_TOKEN, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed };
}

/** As `bao`, but a status other than 2xx (or 404 when `missingOk`) fails with OpenBao's scrubbed errors. */
async function baoOk(method: string, path: string, body?: unknown, missingOk = false): Promise<unknown> {
  const res = await bao(method, path, body);
  if ((res.status >= 200 && res.status < 300) || (missingOk && res.status === 404)) return res.body;
  const errors = (res.body as { errors?: unknown } | undefined)?.errors;
  const detail = Array.isArray(errors) ? errors.join("; ") : "no detail";
  throw new Error(`OpenBao ${method} ${path}: ${res.status}: ${scrub(detail, [env.BAO_TOKEN, ...jwts])}`);
}

/** Deletes every KV v2 path under `area` (data, versions and metadata), depth first. */
async function purgeTree(area: string): Promise<void> {
  const listed = await bao("GET", `kv-v2/metadata/${area}?list=true`);
  if (listed.status !== 200) return;
  const { keys } = (listed.body as { data: { keys: string[] } }).data;
  for (const key of keys) {
    if (key.endsWith("/")) await purgeTree(`${area}/${key.slice(0, -1)}`);
    else await baoOk("DELETE", `kv-v2/metadata/${area}/${key}`, undefined, true);
  }
}

/** A short-lived token of a service account, from the TokenRequest API. */
async function serviceAccountToken(ns: string, name: string): Promise<string> {
  const request = await cluster.core.createNamespacedServiceAccountToken({
    name,
    namespace: ns,
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  const jwt = request.status?.token;
  if (!jwt) throw new Error(`the TokenRequest for ${ns}/${name} returned no token`);
  jwts.push(jwt);
  return jwt;
}

/** The management cluster's server URL and CA certificate (PEM), as its kubeconfig names them. */
async function apiserver(): Promise<{ server: string; ca: string }> {
  const current = cluster.config.getCurrentCluster();
  if (!current) throw new Error("the management kubeconfig has no current cluster");
  const ca = current.caData
    ? Buffer.from(current.caData, "base64").toString("utf8")
    : current.caFile
      ? await readFile(current.caFile, "utf8")
      : undefined;
  if (!ca) throw new Error("the management kubeconfig names no CA certificate");
  return { server: current.server, ca };
}

/**
 * Asserts that no JWT, root token or written value shows anywhere in `err`, as booleans, so that a
 * failing assertion cannot print the secret it found.
 */
function expectNoSecrets(err: unknown, values: string[] = []): void {
  const text = everything(err);
  jwts.forEach((jwt, i) => expect(text.includes(jwt), `the error shows JWT #${i}`).toBe(false));
  expect(text.includes(env.BAO_TOKEN), "the error shows the root token").toBe(false);
  values.forEach((v, i) => expect(text.includes(v), `the error shows written value #${i}`).toBe(false));
  // A JWT's header, in case a token this file did not request (e.g. OpenBao's own) were echoed.
  expect(/eyJ[A-Za-z0-9_-]{10,}\./.test(text), "the error shows a JWT").toBe(false);
}

function kubernetesStore(tokenFile: string, readTokenFile?: (path: string) => Promise<string>) {
  return openBaoStore(
    {
      address: env.BAO_ADDR,
      auth: { method: "kubernetes", role, tokenFile, mountPath },
      mount: "kv-v2",
      timeoutMs: 5_000,
    },
    readTokenFile ? { readTokenFile } : {},
  );
}

beforeAll(async () => {
  // Kubernetes: the operator's service account, a stranger, and a token reviewer allowed TokenReviews.
  const ns = await freshNamespace(cluster, "itest-k8s-auth");
  namespace = ns;
  for (const name of [operatorAccount, reviewerAccount, strangerAccount]) {
    await cluster.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name } } });
  }
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: bindingName },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
      subjects: [{ kind: "ServiceAccount", name: reviewerAccount, namespace: ns }],
    },
  });
  bindingCreated = true;
  const reviewerJwt = await serviceAccountToken(ns, reviewerAccount);
  operatorJwt = await serviceAccountToken(ns, operatorAccount);
  const strangerJwt = await serviceAccountToken(ns, strangerAccount);

  // OpenBao: the Kubernetes auth method on its own mount, verifying tokens with the reviewer's JWT.
  const { server, ca } = await apiserver();
  await baoOk("POST", `sys/auth/${mountPath}`, { type: "kubernetes" });
  await baoOk("POST", `auth/${mountPath}/config`, {
    kubernetes_host: server,
    kubernetes_ca_cert: ca,
    token_reviewer_jwt: reviewerJwt,
    disable_local_ca_jwt: true,
  });
  const capabilities = '["create", "read", "update", "delete", "list"]';
  await baoOk("PUT", `sys/policies/acl/${policy}`, {
    policy: [
      `path "kv-v2/data/${prefix}/*" { capabilities = ${capabilities} }`,
      `path "kv-v2/metadata/${prefix}/*" { capabilities = ${capabilities} }`,
    ].join("\n"),
  });
  await baoOk("POST", `auth/${mountPath}/role/${role}`, {
    bound_service_account_names: [operatorAccount],
    bound_service_account_namespaces: [ns],
    token_policies: [policy],
    token_ttl: "10m",
  });

  // The token files the store reads at login, as kubelet would project them.
  tokenDir = await mkdtemp(join(tmpdir(), "vhost-broker-k8s-auth-"));
  operatorTokenFile = join(tokenDir, "operator-token");
  strangerTokenFile = join(tokenDir, "stranger-token");
  await writeFile(operatorTokenFile, operatorJwt, { mode: 0o600 });
  await writeFile(strangerTokenFile, strangerJwt, { mode: 0o600 });
  store = kubernetesStore(operatorTokenFile);
});

afterAll(async () => {
  // Every step runs even when an earlier one (or the setup) failed; the failures are reported together.
  const problems: unknown[] = [];
  const step = async (what: string, action: () => Promise<unknown>) => {
    try {
      await action();
    } catch (err) {
      problems.push(new Error(`cleanup: ${what} failed: ${scrub(String(err), [env.BAO_TOKEN, ...jwts])}`));
    }
  };
  await step("the purge of the prefix", () => purgeTree(prefix));
  await step("the purge of the outside area", () => purgeTree(outside));
  await step("disabling the auth mount", () => baoOk("DELETE", `sys/auth/${mountPath}`));
  await step("deleting the policy", () => baoOk("DELETE", `sys/policies/acl/${policy}`, undefined, true));
  if (bindingCreated) {
    await step("deleting the ClusterRoleBinding", () =>
      rbac.deleteClusterRoleBinding({ name: bindingName }).catch((err: unknown) => {
        if (!isApiError(err, 404)) throw err;
      }),
    );
  }
  if (namespace) {
    const ns = namespace;
    await step("deleting the namespace", () =>
      cluster.core.deleteNamespace({ name: ns }).catch((err: unknown) => {
        if (!isApiError(err, 404)) throw err;
      }),
    );
  }
  if (tokenDir) {
    const dir = tokenDir;
    await step("removing the token files", () => rm(dir, { recursive: true, force: true }));
  }
  if (problems.length > 0) throw new AggregateError(problems, "the cleanup left something behind");
});

describe("the OpenBao store under Kubernetes auth", () => {
  it("logs in with the operator's service-account token and reports ready", async () => {
    expect(await store.health()).toEqual({ ready: true, state: "ready" });
  });

  it("backs up under the allowed prefix, confirmed through OpenBao's API, and purges it", async () => {
    const path = `${prefix}/openstack/credentials`;
    const data = credentials(password());
    expect(await backUp(store, path, data, owner())).toEqual({ synced: true, version: 1, written: true });
    expect(await backUp(store, path, data, owner())).toEqual({ synced: true, version: 1, written: false });
    expect(await store.read(path)).toEqual({ version: 1, data, metadata: owner() });
    expect(await store.confirm(path, { version: 1, data })).toEqual({ confirmed: true });

    // OpenBao's own view, with the root token: the store did write it, under the role's login.
    const stored = await baoOk("GET", `kv-v2/data/${path}`);
    expect(stored).toMatchObject({ data: { data, metadata: { version: 1, custom_metadata: owner() } } });

    await store.purge(path);
    expect(await store.read(path)).toBeUndefined();
    expect((await bao("GET", `kv-v2/data/${path}`)).status).toBe(404);
    expect((await bao("GET", `kv-v2/metadata/${path}`)).status).toBe(404);
  });

  it("logged in through the Kubernetes auth mount, as the bound service account", async () => {
    // OpenBao's own record of the login: a lookup of the accessor the mount issued.
    const accessors = (await baoOk("LIST", "auth/token/accessors")) as { data: { keys: string[] } };
    const logins: { path: string; meta: Record<string, string> | null }[] = [];
    for (const accessor of accessors.data.keys) {
      const found = await bao("POST", "auth/token/lookup-accessor", { accessor });
      if (found.status !== 200) continue;
      const data = (found.body as { data: { path: string; meta: Record<string, string> | null } }).data;
      if (data.path === `auth/${mountPath}/login`) logins.push(data);
    }
    expect(logins.length).toBeGreaterThanOrEqual(1);
    for (const login of logins) {
      expect(login.meta).toMatchObject({
        role,
        service_account_name: operatorAccount,
        service_account_namespace: namespace,
      });
    }
  });
});

describe("a Kubernetes login or a path OpenBao refuses", () => {
  it("refuses a service account the role does not bind, as auth-refused, without any token", async () => {
    const stranger = kubernetesStore(strangerTokenFile);
    const secret = password();
    const err = await failure(stranger.write(`${prefix}/stranger/credentials`, credentials(secret)));
    expectNoSecrets(err, [secret]);
    expect(err).toBeInstanceOf(BackupError);
    // OpenBao answers the login with 403 "permission denied"; src/backup/openbao.ts maps any 4xx login to auth-refused.
    expect(err).toMatchObject({ kind: "auth-refused", status: 403 });
    expect((err as BackupError).message).toBe(
      `OpenBao refused the Kubernetes login with role "${role}" with status 403: service account name not authorized`,
    );
    expect(isStoreUnavailable(err)).toBe(true);
    expect((await bao("GET", `kv-v2/metadata/${prefix}/stranger/credentials`)).status).toBe(404);

    const health = await stranger.health();
    expect(health).toMatchObject({ ready: false, state: "auth-refused" });
    expectNoSecrets(health);
  });

  it("refuses a role that does not exist (400), as auth-refused", async () => {
    const unknown = openBaoStore({
      address: env.BAO_ADDR,
      auth: { method: "kubernetes", role: `${role}-unknown`, tokenFile: operatorTokenFile, mountPath },
      mount: "kv-v2",
      timeoutMs: 5_000,
    });
    const err = await failure(unknown.read(`${prefix}/unknown/credentials`));
    expectNoSecrets(err);
    expect(err).toBeInstanceOf(BackupError);
    // OpenBao answers an unknown role with 400, not 403; openbao.ts still maps the failed login to auth-refused.
    expect(err).toMatchObject({ kind: "auth-refused", status: 400 });
    expect((err as BackupError).message).toBe(
      `OpenBao refused the Kubernetes login with role "${role}-unknown" with status 400: invalid role name "${role}-unknown"`,
    );
    expect(isStoreUnavailable(err)).toBe(true);
  });

  it("reports a path outside the policy as auth-refused (403), after one fresh login", async () => {
    // The store cannot tell a policy denial from a refused token: both are 403 "permission denied". It
    // therefore logs in again once and retries before it gives up. Counting the token-file reads counts
    // the logins.
    let logins = 0;
    const counting = kubernetesStore(operatorTokenFile, async (p) => {
      logins += 1;
      return readFile(p, "utf8");
    });
    const inside = `${prefix}/counted/credentials`;
    await counting.write(inside, credentials(password()));
    expect(logins).toBe(1);

    const path = `${outside}/credentials`;
    const secret = password();
    const err = await failure(counting.write(path, credentials(secret)));
    expectNoSecrets(err, [secret]);
    expect(err).toBeInstanceOf(BackupError);
    expect(err).toMatchObject({ kind: "auth-refused", status: 403 });
    expect((err as BackupError).message).toBe(
      `OpenBao refused the write of "${path}" with status 403: 1 error occurred: * permission denied`,
    );
    expect(isStoreUnavailable(err)).toBe(true);
    expect(logins).toBe(2);
    expect((await bao("GET", `kv-v2/metadata/${path}`)).status).toBe(404);

    // A read and a purge outside the prefix are refused the same way, not taken for a missing path.
    const readErr = await failure(counting.read(path));
    expectNoSecrets(readErr);
    expect(readErr).toMatchObject({ kind: "auth-refused", status: 403 });
    const purgeErr = await failure(counting.purge(path));
    expectNoSecrets(purgeErr);
    expect(purgeErr).toMatchObject({ kind: "auth-refused", status: 403 });
    expect(logins).toBe(4);

    // The store is still usable inside the prefix afterwards.
    await counting.purge(inside);
    expect((await bao("GET", `kv-v2/metadata/${inside}`)).status).toBe(404);
  });
});
