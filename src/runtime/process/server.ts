import { readFileSync } from "node:fs";
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { join } from "node:path";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { KubeRest } from "../port/kube-rest.ts";
import type { RuntimeConfig } from "./config.ts";
import { MetricsAuthorizer } from "./metrics-auth.ts";
import { selfSignedCertificate } from "./self-signed.ts";

// Two listeners, as controller-runtime has them: the probes (/healthz, /readyz) over plain HTTP for
// the kubelet, and /metrics, over HTTPS for callers the API server allows (or plain HTTP when
// metrics-secure is off).

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export function parseAddress(address: string): { host: string | undefined; port: number } {
  const at = address.lastIndexOf(":");
  const host = address.slice(0, at);
  return { host: host === "" ? undefined : host, port: Number(address.slice(at + 1)) };
}

const pathOf = (req: IncomingMessage) => (req.url ?? "/").split("?")[0];

async function listen(server: Server, address: string): Promise<Server> {
  const { host, port } = parseAddress(address);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

export interface ProbeServerOptions {
  address: string;
  /** Ready: see Manager.ready. The text says why not. */
  ready: () => { ready: boolean; why?: string };
}

export function startProbeServer(options: ProbeServerOptions): Promise<Server> {
  return listen(
    createHttpServer((req, res) => {
      const path = pathOf(req);
      if (path === "/healthz") return void res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      if (path !== "/readyz") return void res.writeHead(404).end();
      const { ready, why } = options.ready();
      res
        .writeHead(ready ? 200 : 503, { "content-type": "text/plain" })
        .end(ready ? "ok" : (why ?? "not ready"));
    }),
    options.address,
  );
}

export interface MetricsServerOptions {
  address: string;
  registry: Registry;
  log: Logger;
  /** HTTPS with authentication and authorization; undefined = plain HTTP, open to anyone who reaches it. */
  secure?: { authorizer: MetricsAuthorizer; certDir: string };
}

/**
 * Every metric, or only those `names` asks for (`/metrics?name=a&name=b`), one after the other: a
 * caller that reads a few counters (the benchmark, every second) does not pay for the per-object
 * series of 30,000 objects. Each is collected when asked for; prom-client collects some together (the
 * heap's total sets its used, the CPU's user time its total), so ask for the first of those too.
 */
async function exposition(registry: Registry, names: string[]): Promise<string> {
  if (names.length === 0) return registry.metrics();
  const texts: string[] = [];
  for (const name of names) {
    if (registry.getSingleMetric(name)) texts.push(await registry.getSingleMetricAsString(name));
  }
  return `${texts.join("\n\n")}\n`;
}

export function startMetricsServer(options: MetricsServerOptions): Promise<Server> {
  const { registry, secure, log } = options;
  const serve = (req: IncomingMessage, res: ServerResponse) =>
    exposition(registry, new URL(req.url ?? "/", "http://x").searchParams.getAll("name")).then(
      (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  const handler: Handler = (req, res) => {
    const path = pathOf(req) ?? "/";
    if (path !== "/metrics") return void res.writeHead(404).end();
    if (!secure) return void serve(req, res);
    secure.authorizer.check(req.headers.authorization, path).then(
      (verdict) => {
        if (verdict.allowed) return serve(req, res);
        log.debug({ status: verdict.status, reason: verdict.reason }, "metrics scrape refused");
        res.writeHead(verdict.status, { "content-type": "text/plain" }).end(verdict.reason);
      },
      (error: unknown) => {
        log.warn({ err: error }, "metrics scrape: the authentication or authorization review failed");
        res.writeHead(500, { "content-type": "text/plain" }).end("authorization review failed");
      },
    );
  };
  if (!secure) return listen(createHttpServer(handler), options.address);
  const tls = secure.certDir
    ? {
        cert: readFileSync(join(secure.certDir, "tls.crt")),
        key: readFileSync(join(secure.certDir, "tls.key")),
      }
    : selfSignedCertificate(["localhost", "127.0.0.1"]);
  return listen(createHttpsServer({ ...tls, minVersion: "TLSv1.2" }, handler), options.address);
}

/** Both listeners as the settings ask for them: the probes, then the metrics. */
export async function startServers(options: {
  config: RuntimeConfig;
  registry: Registry;
  log: Logger;
  /** The management cluster's client, which reviews a scrape's token when metrics-secure is on. */
  management: KubeRest;
  ready: ProbeServerOptions["ready"];
}): Promise<Server[]> {
  const { config, registry, log, management } = options;
  return [
    await startProbeServer({ address: config["health-probe-bind-address"], ready: options.ready }),
    await startMetricsServer({
      address: config["metrics-bind-address"],
      registry,
      log,
      ...(config["metrics-secure"]
        ? {
            secure: {
              authorizer: new MetricsAuthorizer(management),
              certDir: config["metrics-cert-dir"],
            },
          }
        : {}),
    }),
  ];
}
