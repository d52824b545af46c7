// The management API client against the local RabbitMQ, plus loopback servers for what a healthy
// broker cannot show: a closed port, a broker that never answers, and TLS with a private CA.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, request as httpRequest, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { createServer as createTcpServer, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ManagementApiError,
  ManagementClients,
  ManagementNotFoundError,
  ManagementTransientError,
  apiPath,
  declareQueue,
  declareVhost,
  deleteVhost,
  isInequivalentRedeclare,
} from "../../src/topology/broker/index.ts";
import { localEnv } from "../../harness/world/env.ts";

const env = localEnv();
const clients = new ManagementClients({ requestTimeoutMs: 2_000, connectTimeoutMs: 1_000 });
const admin = () =>
  clients.client({
    url: env.RABBITMQ_MANAGEMENT_URL,
    username: env.RABBITMQ_ADMIN_USERNAME,
    password: env.RABBITMQ_ADMIN_PASSWORD,
  });
const overview = z.looseObject({ management_version: z.string() });
const servers: Server[] = [];

afterAll(async () => {
  await clients.close();
  for (const s of servers) s.close();
});

async function listen<S extends Server>(server: S): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a rejection");
}

function expectNoSecret(err: Error, secret: string): void {
  expect(err.message).not.toContain(secret);
  expect(String(err.stack)).not.toContain(secret);
  expect(JSON.stringify(err)).not.toContain(secret);
  expect(JSON.stringify(err)).not.toContain(Buffer.from(secret).toString("base64"));
}

describe("management API client", () => {
  it("reads the real broker with basic auth and checks the answer", async () => {
    const answer = await admin().get("/api/overview", overview);
    expect(answer.management_version).toMatch(/^\d+\.\d+/);
    await expect(admin().get("/api/overview", z.object({ nonsense: z.string() }))).rejects.toThrow(
      /unexpected answer/,
    );
  });

  it("sends every request under the path of its base URL (a broker with management.path_prefix)", async () => {
    // The local broker has no prefix: a loopback proxy serves it under /rabbitmq only, as a broker
    // with management.path_prefix = /rabbitmq does, and answers 404 elsewhere.
    const broker = new URL(env.RABBITMQ_MANAGEMENT_URL);
    const seen: string[] = [];
    const port = await listen(
      createHttpServer((req, res) => {
        seen.push(req.url ?? "");
        if (!req.url?.startsWith("/rabbitmq/api/")) return void res.writeHead(404).end();
        const path = req.url.slice("/rabbitmq".length);
        const { method, headers } = req;
        const upstream = httpRequest(
          { host: broker.hostname, port: broker.port, path, method, headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        req.pipe(upstream);
      }),
    );
    const prefixed = clients.client({
      url: `http://127.0.0.1:${port}/rabbitmq`,
      username: env.RABBITMQ_ADMIN_USERNAME,
      password: env.RABBITMQ_ADMIN_PASSWORD,
    });
    const vhost = `vb-prefixed-${Date.now()}`;
    await prefixed.put(apiPath("vhosts", vhost), {});
    try {
      expect(await admin().find(apiPath("vhosts", vhost), overview.partial())).toBeDefined();
      expect(seen).toEqual([`/rabbitmq/api/vhosts/${vhost}`]);
    } finally {
      await deleteVhost(admin(), vhost);
    }
  });

  it("sends the default vhost as %2F", async () => {
    const vhost = await admin().get(apiPath("vhosts", "/"), z.looseObject({ name: z.string() }));
    expect(vhost.name).toBe("/");
  });

  it("gives NotFound for a 404 and the broker's reason for another 4xx", async () => {
    const missing = await rejection(admin().get(apiPath("vhosts", `vb-missing-${Date.now()}`), overview));
    expect(missing).toBeInstanceOf(ManagementNotFoundError);
    expect(missing).toMatchObject({ status: 404 });
    expect(await admin().find(apiPath("users", `vb-missing-${Date.now()}`), overview)).toBeUndefined();

    const refused = await rejection(admin().put(apiPath("vhost-limits", "/", "max-nothing"), { value: 1 }));
    expect(refused).toBeInstanceOf(ManagementApiError);
    expect(refused).not.toBeInstanceOf(ManagementNotFoundError);
    expect((refused as ManagementApiError).status).toBeGreaterThanOrEqual(400);
    expect((refused as ManagementApiError).reason.length).toBeGreaterThan(0);
  });

  it("gives a 4xx, not a transient error, for a wrong password, and never shows it", async () => {
    const secret = `wrong-${Math.random().toString(36).slice(2)}-pw`;
    const client = clients.client({
      url: env.RABBITMQ_MANAGEMENT_URL,
      username: "vb-nobody",
      password: secret,
    });
    const err = await rejection(client.get("/api/overview", overview));
    expect(err).toBeInstanceOf(ManagementApiError);
    expect(err).toMatchObject({ status: 401 });
    expectNoSecret(err, secret);
  });

  it("gives the transient error quickly for an unreachable broker", async () => {
    const port = await closedPort();
    const client = clients.client({
      url: `http://127.0.0.1:${port}`,
      username: "u",
      password: "closed-port-pw",
    });
    const started = Date.now();
    const err = await rejection(client.put(apiPath("vhosts", "x"), {}));
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(err).toBeInstanceOf(ManagementTransientError);
    expect(err).toMatchObject({ kind: "connection" });
    expect(err.message).toContain("PUT /api/vhosts/x");
    expectNoSecret(err, "closed-port-pw");
  });

  it("gives up on a broker that never answers after the request timeout", async () => {
    const held: Socket[] = [];
    const silent = createTcpServer((socket) => held.push(socket));
    const port = await listen(silent as unknown as Server);
    const quick = new ManagementClients({ requestTimeoutMs: 300 });
    try {
      const client = quick.client({ url: `127.0.0.1:${port}`, username: "u", password: "silent-pw" });
      const started = Date.now();
      const err = await rejection(client.get("/api/overview", overview));
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(err).toBeInstanceOf(ManagementTransientError);
      expect(err).toMatchObject({ kind: "timeout" });
      expectNoSecret(err, "silent-pw");
    } finally {
      await quick.close();
      for (const s of held) s.destroy();
    }
  });

  it("treats a 5xx as transient and reuses kept-alive connections", async () => {
    let connections = 0;
    let status = 200;
    const server = createHttpServer((_req, res) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(status === 200 ? '{"management_version":"9.9.9"}' : '{"error":"boom","reason":"node down"}');
    });
    server.on("connection", () => connections++);
    const port = await listen(server);
    const client = clients.client({ url: `http://127.0.0.1:${port}`, username: "u", password: "p" });
    for (let i = 0; i < 20; i++) await client.get("/api/overview", overview);
    // undici may open a second connection while the first is being released; never one per request
    expect(connections).toBeLessThanOrEqual(2);
    status = 503;
    const err = await rejection(client.get("/api/overview", overview));
    expect(err).toBeInstanceOf(ManagementTransientError);
    expect(err).toMatchObject({ kind: "server", status: 503 });
    expect(err.message).toContain("node down");
  });

  it("trusts a configured CA for https and refuses an unknown certificate", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vb-tls-"));
    try {
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
          "/CN=localhost",
          "-addext",
          "subjectAltName=IP:127.0.0.1",
          "-keyout",
          join(dir, "key.pem"),
          "-out",
          join(dir, "cert.pem"),
        ],
        { stdio: "ignore" },
      );
      const cert = readFileSync(join(dir, "cert.pem"), "utf8");
      const server = createHttpsServer({ key: readFileSync(join(dir, "key.pem")), cert }, (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"management_version":"tls"}');
      });
      const url = `https://127.0.0.1:${await listen(server)}`;
      const trusted = clients.client({ url, username: "u", password: "tls-pw", ca: cert });
      expect((await trusted.get("/api/overview", overview)).management_version).toBe("tls");
      const untrusted = clients.client({ url, username: "u", password: "tls-pw" });
      const err = await rejection(untrusted.get("/api/overview", overview));
      expect(err).toBeInstanceOf(ManagementTransientError);
      expect(err.message).toMatch(/certificate/i);
      expectNoSecret(err, "tls-pw");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("never shows the administrator's password in an error from the real broker", async () => {
    const secret = env.RABBITMQ_ADMIN_PASSWORD;
    const vhost = `vb-client-${Date.now()}`;
    const errors: Error[] = [];
    await declareVhost(admin(), { name: vhost });
    try {
      await declareQueue(admin(), { name: "q", vhost, durable: true });
      const refusal = await rejection(declareQueue(admin(), { name: "q", vhost, durable: false }));
      expect(isInequivalentRedeclare(refusal)).toBe(true);
      errors.push(refusal);
      errors.push(await rejection(admin().get(apiPath("queues", vhost, "missing"), overview)));
      errors.push(await rejection(admin().put(apiPath("permissions", vhost, "vb-no-such-user"), {})));
      const port = await closedPort();
      const gone = clients.client({ url: `http://127.0.0.1:${port}`, username: "u", password: secret });
      errors.push(await rejection(gone.get("/api/overview", overview)));
    } finally {
      await deleteVhost(admin(), vhost);
    }
    expect(errors).toHaveLength(4);
    for (const err of errors) expectNoSecret(err, secret);
  });
});
