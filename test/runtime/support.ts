import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { Writable } from "node:stream";
import YAML from "yaml";
import { createLogger, type Logger } from "../../src/runtime/base/logging.ts";
import { localEnv } from "../../harness/world/env.ts";
import { freePort } from "../../harness/world/ports.ts";
import { scratchFolder } from "../../harness/world/scratch.ts";

// Helpers shared by the runtime's integration tests.

// Made on import, while the test file is collected: it watches that file's tests.
const apiserverLogs = scratchFolder("vb-apiserver-", "private kube-apiserver logs");

/** A logger whose JSON lines are kept in memory (and stay out of the test output). */
export function memoryLogger(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n"))
        if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger({ level: "debug", destination }), lines };
}

/** The kubeconfig file with every referenced file embedded as *-data, as a Secret must carry it. */
export function embeddedKubeconfig(path: string, server?: string): string {
  const doc = YAML.parse(readFileSync(path, "utf8")) as {
    clusters: { cluster: Record<string, string> }[];
    users: { user: Record<string, string> }[];
  };
  const embed = (obj: Record<string, string>, file: string, data: string) => {
    if (obj[file]) {
      obj[data] = readFileSync(obj[file]).toString("base64");
      delete obj[file];
    }
  };
  for (const { cluster } of doc.clusters) {
    embed(cluster, "certificate-authority", "certificate-authority-data");
    if (server) cluster.server = server;
  }
  for (const { user } of doc.users) {
    embed(user, "client-certificate", "client-certificate-data");
    embed(user, "client-key", "client-key-data");
  }
  return YAML.stringify(doc);
}

export function kubeConfigFromString(text: string): k8s.KubeConfig {
  const config = new k8s.KubeConfig();
  config.loadFromString(text);
  return config;
}

export interface PrivateApiserver {
  url: string;
  port: number;
  prefix: string;
  kubeconfig: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Deletes its keys from the shared etcd, and its log unless a test failed: the last step, once stopped. */
  purge(): Promise<void>;
}

/**
 * A kube-apiserver of our own on the shared etcd under its own prefix, started and stopped by
 * this test only (the shared ones are never touched). Flags follow scripts/localenv/kube.sh.
 */
export async function privateApiserver(): Promise<PrivateApiserver> {
  const env = localEnv();
  const state = env.LOCALENV_STATE;
  const pki = `${state}/pki`;
  const bin = process.env.LOCALENV_K8S_BIN ?? readEnvVar(state, "LOCALENV_K8S_BIN");
  const etcd = readEnvVar(state, "LOCALENV_ETCD_URL") || "http://127.0.0.1:23790";
  const port = await freePort();
  const prefix = `/runtime-itest-${randomBytes(4).toString("hex")}`;
  const url = `https://127.0.0.1:${port}`;
  const kubeconfig = embeddedKubeconfig(env.KUBECONFIG, url);
  const log = join(apiserverLogs.path, `apiserver-${port}.log`);
  let child: ChildProcess | undefined;

  const ready = async () => {
    const config = kubeConfigFromString(kubeconfig);
    const api = config.makeApiClient(k8s.CoreV1Api);
    const deadline = Date.now() + 90_000;
    for (;;) {
      try {
        await api.readNamespace({ name: "default" });
        return;
      } catch (error) {
        if (Date.now() > deadline)
          throw new Error(`private kube-apiserver not ready; log in ${log}`, { cause: error });
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };

  return {
    url,
    port,
    prefix,
    kubeconfig,
    async start() {
      const out = openSync(log, "a");
      child = spawn(
        `${bin}/kube-apiserver`,
        [
          `--etcd-servers=${etcd}`,
          `--etcd-prefix=${prefix}`,
          "--bind-address=127.0.0.1",
          "--advertise-address=127.0.0.1",
          "--endpoint-reconciler-type=none",
          `--secure-port=${port}`,
          `--tls-cert-file=${pki}/serving.crt`,
          `--tls-private-key-file=${pki}/serving.key`,
          `--client-ca-file=${pki}/ca.crt`,
          "--service-cluster-ip-range=10.0.0.0/24",
          "--authorization-mode=RBAC",
          "--disable-admission-plugins=ServiceAccount",
          `--service-account-issuer=https://runtime-itest.localenv.invalid`,
          `--service-account-key-file=${pki}/sa.pub`,
          `--service-account-signing-key-file=${pki}/sa.key`,
        ],
        { stdio: ["ignore", out, out] },
      );
      closeSync(out);
      child.once("exit", (code) => {
        if (code !== null && code !== 0) appendFileSync(log, `\nexited with ${code}\n`);
      });
      await ready();
    },
    async stop() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once("exit", resolve));
      running.kill("SIGKILL");
      await exited;
    },
    async purge() {
      apiserverLogs.release();
      const key = Buffer.from(`${prefix}/`).toString("base64");
      const end = Buffer.from(`${prefix}0`).toString("base64");
      await fetch(`${etcd}/v3/kv/deleterange`, {
        method: "POST",
        body: JSON.stringify({ key, range_end: end }),
      });
    },
  };
}

function readEnvVar(state: string, name: string): string {
  const m = new RegExp(`^export ${name}=(.*)$`, "m").exec(readFileSync(`${state}/env.sh`, "utf8"));
  return m?.[1] ?? "";
}

/** Waits for `check` to hold, polling quickly; fails naming what it waited for. */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A new ServiceAccount's token, from the TokenRequest API: a real identity with no RBAC of its own. */
export async function serviceAccountToken(
  core: k8s.CoreV1Api,
  namespace: string,
  name: string,
): Promise<string> {
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const request = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`no token issued for ${namespace}/${name}`);
  return token;
}

/** The kubeconfig at `path` with its user replaced by a bearer token. */
export function tokenKubeconfig(path: string, token: string): string {
  const doc = YAML.parse(embeddedKubeconfig(path)) as { users: { user: Record<string, string> }[] };
  for (const entry of doc.users) entry.user = { token };
  return YAML.stringify(doc);
}
