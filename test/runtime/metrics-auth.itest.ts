// /metrics over HTTPS as controller-runtime's filter serves it, against the real API server: a scrape
// without a token, or with a token the API server does not know, is refused (401); a ServiceAccount
// token is reviewed (TokenReview) and its user must be allowed `get` on /metrics (SubjectAccessReview):
// with a ClusterRole that allows it the scrape succeeds, without one it is refused (403).
import { request } from "node:https";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { realClock } from "../../src/runtime/base/clock.ts";
import { loadConfig, runtimeSettings } from "../../src/runtime/process/config.ts";
import { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { Manager } from "../../src/runtime/process/manager.ts";
import { Metrics } from "../../src/runtime/loop/metrics.ts";
import { selfSignedCertificate } from "../../src/runtime/process/self-signed.ts";
import { freshNamespace, testCluster } from "../../harness/world/kube.ts";
import { freePort } from "../../harness/world/ports.ts";
import { memoryLogger, serviceAccountToken } from "./support.ts";

const management = testCluster("management");
const rbac = management.config.makeApiClient(k8s.RbacAuthorizationV1Api);
const certificate = selfSignedCertificate(["localhost", "127.0.0.1"]);
let ns = "";
let port = 0;
let certDir = "";
let manager: Manager | undefined;

/** GET /metrics over HTTPS, trusting only the certificate the server was given. */
function scrape(token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/metrics",
        ca: certificate.cert,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      },
      (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += String(d)));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

beforeAll(async () => {
  ns = await freshNamespace(management, "metrics-auth");
  certDir = mkdtempSync(join(tmpdir(), "metrics-cert-"));
  writeFileSync(join(certDir, "tls.crt"), certificate.cert);
  writeFileSync(join(certDir, "tls.key"), certificate.key);
  port = await freePort();
  const config = loadConfig(
    runtimeSettings,
    [
      `--metrics-bind-address=127.0.0.1:${port}`,
      `--metrics-cert-dir=${certDir}`,
      `--health-probe-bind-address=127.0.0.1:${await freePort()}`,
    ],
    {},
  );
  const rest = new KubeRest(management.kubeconfig);
  manager = new Manager({
    config,
    log: memoryLogger().log,
    metrics: new Metrics({ processMetrics: false }),
    clock: realClock,
    clusters: { subscribe: () => undefined, start: async () => undefined, stop: async () => undefined },
    management: rest,
    identity: "metrics-auth",
  });
  await manager.startServers();
});

afterAll(async () => {
  await manager?.shutdown();
  if (certDir) rmSync(certDir, { recursive: true, force: true });
  await rbac.deleteClusterRoleBinding({ name: ns }).catch(() => undefined);
  await rbac.deleteClusterRole({ name: ns }).catch(() => undefined);
  await management.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

describe("/metrics over HTTPS with authentication and authorization", () => {
  it("refuses a scrape without a token, or with a token the API server does not know", async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape("not-a-token")).status).toBe(401);
  });

  it("serves a ServiceAccount allowed to get /metrics, and refuses one that is not", async () => {
    const reader = await serviceAccountToken(management.core, ns, "reader");
    const stranger = await serviceAccountToken(management.core, ns, "stranger");
    await rbac.createClusterRole({
      body: { metadata: { name: ns }, rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }] },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: ns },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: ns },
        subjects: [{ kind: "ServiceAccount", name: "reader", namespace: ns }],
      },
    });
    const allowed = await scrape(reader);
    expect(allowed.status).toBe(200);
    expect(allowed.body).toContain("# TYPE vhost_broker_watch_events_total counter");
    const refused = await scrape(stranger);
    expect(refused.status).toBe(403);
    expect(refused.body).not.toContain("# TYPE");
  });
});
