// The RabbitMQVhost leg reaches its bus's broker as the topology controller does (src/rabbitmq), against
// the local RabbitMQ: the successor's hash check, the connection count and the stray-user removal work
// with a connection-uri annotation without a scheme, with management.path_prefix in the RabbitmqCluster's
// additionalConfig (a loopback proxy serves the broker under /rabbitmq only), and with a TLS-only
// management port (a loopback TLS proxy whose certificate only the configured broker CA trusts). The
// stand-ins' Services resolve to loopback through the clients' lookup; everything else is the real path.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { lookup as dnsLookup } from "node:dns";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import {
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, LookupFunction } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createManagedBus, installCrds, localBrokerFromEnv } from "../../harness/world/managed-bus.ts";
import { rabbitMQVhostOrder, type RabbitMQBackend } from "../../src/orders/rabbitmq/kind.ts";
import type { BrokerConnections } from "../../src/rabbitmq/broker-access.ts";
import { ManagementClients } from "../../src/rabbitmq/client.ts";
import { apiPath } from "../../src/rabbitmq/paths.ts";
import { RestKube } from "../../src/runtime/port/rest-kube.ts";
import { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { admin, clients as adminClients, env, unique } from "../topology/broker-support.ts";
import { eventually, freshNamespace, testCluster } from "../../harness/world/kube.ts";

const cluster = testCluster("management");
const kube = new RestKube(new KubeRest(cluster.kubeconfig));
const custom = cluster.config.makeApiClient(k8s.CustomObjectsApi);
const mergePatch = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
const domain = ".test";
const amqpUrl = new URL(env.RABBITMQ_URL);
const managementUrl = new URL(env.RABBITMQ_MANAGEMENT_URL);

// The stand-ins' Services, `<name>.<namespace>.svc.test`, are the loopback proxies.
const loopback: LookupFunction = (hostname, options, callback) => {
  if (!hostname.endsWith(`.svc${domain}`)) return dnsLookup(hostname, options, callback);
  if (options.all) return callback(null, [{ address: "127.0.0.1", family: 4 }]);
  callback(null, "127.0.0.1", 4);
};

const servers: Server[] = [];
const seen: Record<"prefixed" | "tls", string[]> = { prefixed: [], tls: [] };
const tlsDir = mkdtempSync(join(tmpdir(), "vb-bus-tls-"));
let ns = "";
let ca = "";
let clients: ManagementClients;

/** Forwards a request to the local broker's management API, at `path`. */
function forward(req: IncomingMessage, res: ServerResponse, path: string): void {
  const upstream = httpRequest(
    {
      host: managementUrl.hostname,
      port: managementUrl.port,
      path,
      method: req.method,
      headers: req.headers,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on("error", () => res.writeHead(502).end());
  req.pipe(upstream);
}

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/** A self-signed certificate for `host`, which is its own CA. */
function certificateFor(host: string): { key: Buffer; cert: string } {
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      `/CN=${host}`,
      "-addext",
      `subjectAltName=DNS:${host}`,
      "-keyout",
      join(tlsDir, "key.pem"),
      "-out",
      join(tlsDir, "cert.pem"),
    ],
    { stdio: "ignore" },
  );
  return { key: readFileSync(join(tlsDir, "key.pem")), cert: readFileSync(join(tlsDir, "cert.pem"), "utf8") };
}

/** The stand-in without the annotation: its Service (these ports) and additionalConfig name the broker. */
async function servedByService(name: string, ports: k8s.V1ServicePort[], additionalConfig?: string) {
  const where = {
    group: "rabbitmq.com",
    version: "v1beta1",
    plural: "rabbitmqclusters",
    namespace: ns,
    name,
  };
  const spec = additionalConfig ? { rabbitmq: { additionalConfig } } : {};
  const body = { metadata: { annotations: { "rabbitmq.com/operator-connection-uri": null } }, spec };
  await custom.patchNamespacedCustomObject({ ...where, body }, mergePatch);
  await cluster.core.patchNamespacedService({ namespace: ns, name, body: { spec: { ports } } }, mergePatch);
}

beforeAll(async () => {
  await installCrds(cluster.config);
  ns = await freshNamespace(cluster, "bus-access");
  const broker = localBrokerFromEnv(env as unknown as NodeJS.ProcessEnv);
  // The annotation as upstream accepts it: host and port, no scheme.
  await createManagedBus(cluster.config, ns, { ...broker, managementUrl: managementUrl.host }, "schemeless");

  const prefixedPort = await listen(
    createHttpServer((req, res) => {
      seen.prefixed.push(req.url ?? "");
      if (!req.url?.startsWith("/rabbitmq/api/")) return void res.writeHead(404).end();
      forward(req, res, req.url.slice("/rabbitmq".length));
    }),
  );
  await createManagedBus(cluster.config, ns, broker, "prefixed");
  await servedByService(
    "prefixed",
    [{ name: "management", port: prefixedPort }],
    "log.console = true\nmanagement.path_prefix = /rabbitmq",
  );

  const tls = certificateFor(`tls.${ns}.svc${domain}`);
  ca = tls.cert;
  const tlsPort = await listen(
    createHttpsServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      seen.tls.push(req.url ?? "");
      forward(req, res, req.url ?? "/");
    }),
  );
  await createManagedBus(cluster.config, ns, broker, "tls");
  await servedByService("tls", [
    { name: "amqp", port: 5672 },
    { name: "management-tls", port: tlsPort },
  ]);

  clients = new ManagementClients({ requestTimeoutMs: 5_000, connectTimeoutMs: 2_000, lookup: loopback });
});

afterAll(async () => {
  await clients?.close();
  await adminClients.close();
  for (const server of servers) server.closeAllConnections?.();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  rmSync(tlsDir, { recursive: true, force: true });
  if (ns) await cluster.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

const backend = (name: string): RabbitMQBackend => ({
  name,
  rabbitmqCluster: { namespace: ns, name },
  endpoint: { host: amqpUrl.hostname, port: Number(amqpUrl.port || 5672) },
});
const leg = (withCa = true) => {
  const broker: BrokerConnections = { clients, resolve: { domain, ca: withCa ? ca : undefined } };
  return rabbitMQVhostOrder({ broker });
};

describe.each(["schemeless", "prefixed", "tls"] as const)("the order leg on a bus reached %s", (busName) => {
  const vhost = unique(`bus-${busName}`);
  const user = unique(`bus-${busName}-v1`);
  const stray = unique(`bus-${busName}-v0`);
  const password = `pw-${randomBytes(12).toString("base64url")}`;
  const login = () => ({ ...backend(busName).endpoint, resource: vhost, username: user, password });

  beforeAll(async () => {
    await admin.put(apiPath("vhosts", vhost), {});
    for (const name of [user, stray]) {
      await admin.put(apiPath("users", name), { password, tags: "" });
      await admin.put(apiPath("permissions", vhost, name), { configure: ".*", write: ".*", read: ".*" });
    }
  });

  afterAll(async () => {
    for (const name of [user, stray]) await admin.delete(apiPath("users", name)).catch(() => undefined);
    await admin.delete(apiPath("vhosts", vhost)).catch(() => undefined);
  });

  it("checks the successor's stored hash before the switch", async () => {
    const kind = leg();
    expect(await kind.successorCheck(kube, backend(busName), login(), 5_000)).toEqual({ accepted: true });
    expect(
      await kind.successorCheck(kube, backend(busName), { ...login(), password: "not-it" }, 5_000),
    ).toEqual({ accepted: false, reason: `the broker holds another password for user "${user}"` });
    // Made again on the broker (its User deleted and re-created), the user has lost its permission there.
    await admin.delete(apiPath("users", user));
    await admin.put(apiPath("users", user), { password, tags: "" });
    expect(await kind.successorCheck(kube, backend(busName), login(), 5_000)).toEqual({
      accepted: false,
      reason: `the broker holds no permission of user "${user}" on vhost "${vhost}"`,
    });
    await admin.put(apiPath("permissions", vhost, user), { configure: ".*", write: ".*", read: ".*" });
    expect(await kind.successorCheck(kube, backend(busName), login(), 5_000)).toEqual({ accepted: true });
  });

  it("counts the user's open connections", async () => {
    const kind = leg();
    expect(await kind.connectionsOf(kube, backend(busName), user, 5_000)).toEqual({ known: true, count: 0 });
    const connection = await amqp.connect(
      { ...login(), protocol: "amqp", hostname: amqpUrl.hostname, vhost },
      { timeout: 5_000 },
    );
    connection.on("error", () => undefined);
    try {
      await eventually(
        "the broker to list the connection",
        async () => {
          const now = await kind.connectionsOf(kube, backend(busName), user, 5_000);
          return now.known && now.count === 1 ? now : undefined;
        },
        3_000,
        50,
      );
    } finally {
      await connection.close();
    }
  });

  it("removes a stray user of the vhost and keeps the declared one", async () => {
    const removal = await leg().removeStrayAccounts!(
      kube,
      backend(busName),
      vhost,
      (name) => name === stray,
      5_000,
      { cluster: "", namespace: "tenant", name: "order" },
      [],
    );
    expect(removal).toEqual({ removed: [stray] });
    expect(await admin.find(apiPath("users", stray), z.looseObject({}))).toBeUndefined();
    expect(await admin.find(apiPath("users", user), z.looseObject({}))).toBeDefined();
  });
});

describe("what reached the proxies", () => {
  it("went under the path prefix, and over TLS", () => {
    expect(seen.prefixed.length).toBeGreaterThan(0);
    expect(seen.prefixed.every((path) => path.startsWith("/rabbitmq/api/"))).toBe(true);
    expect(seen.tls.length).toBeGreaterThan(0);
  });

  it("refuses the TLS port's certificate without the broker CA, and names no password", async () => {
    const kind = leg(false);
    const login = { host: "h", port: 1, resource: "/", username: "nobody", password: "successor-pw" };
    const check = await kind.successorCheck(kube, backend("tls"), login, 5_000);
    expect(check).toMatchObject({ accepted: false, reason: expect.stringMatching(/certificate/i) });
    const count = await kind.connectionsOf(kube, backend("tls"), "nobody", 5_000);
    expect(count).toMatchObject({ known: false, reason: expect.stringMatching(/certificate/i) });
    for (const text of [JSON.stringify(check), JSON.stringify(count)]) {
      expect(text).not.toContain(env.RABBITMQ_ADMIN_PASSWORD);
      expect(text).not.toContain("successor-pw");
    }
  });
});
