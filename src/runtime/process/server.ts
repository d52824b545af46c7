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
import type { MetricsAuthorizer } from "./metrics-auth.ts";
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

export function startMetricsServer(options: MetricsServerOptions): Promise<Server> {
  const { registry, secure, log } = options;
  const serve = (res: ServerResponse) =>
    registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  const handler: Handler = (req, res) => {
    const path = pathOf(req) ?? "/";
    if (path !== "/metrics") return void res.writeHead(404).end();
    if (!secure) return void serve(res);
    secure.authorizer.check(req.headers.authorization, path).then(
      (verdict) => {
        if (verdict.allowed) return serve(res);
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
