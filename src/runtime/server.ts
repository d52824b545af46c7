import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";

// /metrics, /healthz and /readyz on one port.

export interface ProbeServerOptions {
  address: string;
  registry: Registry;
  /** Ready means the caches this process needs are synced (see Manager.ready). */
  ready: () => boolean;
}

export function parseAddress(address: string): { host: string | undefined; port: number } {
  const at = address.lastIndexOf(":");
  const host = address.slice(0, at);
  return { host: host === "" ? undefined : host, port: Number(address.slice(at + 1)) };
}

export async function startProbeServer(options: ProbeServerOptions): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    } else if (path === "/readyz") {
      const ready = options.ready();
      res
        .writeHead(ready ? 200 : 503, { "content-type": "text/plain" })
        .end(ready ? "ok" : "caches not synced");
    } else if (path === "/metrics") {
      options.registry.metrics().then(
        (text) => res.writeHead(200, { "content-type": options.registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  const { host, port } = parseAddress(options.address);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
