// A pass-through HTTP proxy in front of a real broker's management API: every request goes to the
// broker and its answer comes back unchanged, and the proxy records `METHOD /path` of each, so a test
// can count what the controller asked of a real node. The one thing it makes up is what no single
// local node can show: a node of a cluster whose copy of a user lags a PUT another node took (Khepri
// reads are local, RabbitMQ 4.2 on). `lag(user, n)` answers the next n reads of that user as such a
// node does, with the 404 the broker itself sends for an absent user.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { apiPath } from "../../src/topology/broker/index.ts";

/** The broker's own answer to GET /api/users/{name} of an absent user (4.3.6 and 3.10.8 alike). */
const absentUser = '{"error":"Object Not Found","reason":"Not Found"}';

export class BrokerProxy {
  /** Every request, in order: `METHOD /path` as sent (percent-encoded, no query). */
  readonly requests: string[] = [];
  readonly #target: URL;
  readonly #lagging = new Map<string, number>();
  readonly #server: Server;

  private constructor(target: string) {
    this.#target = new URL(target);
    this.#server = createServer((req, res) => this.#handle(req, res));
  }

  static async start(target: string): Promise<BrokerProxy> {
    const proxy = new BrokerProxy(target);
    await new Promise<void>((resolve) => proxy.#server.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  get url(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  count(request: string): number {
    return this.requests.filter((r) => r === request).length;
  }

  /** The next `reads` GETs of `user` answer 404, as a node that has not applied its PUT yet. */
  lag(user: string, reads: number): void {
    this.#lagging.set(apiPath("users", user), reads);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const method = req.method ?? "GET";
    const path = new URL(req.url ?? "/", "http://proxy").pathname;
    this.requests.push(`${method} ${path}`);
    const lag = method === "GET" ? (this.#lagging.get(path) ?? 0) : 0;
    if (lag > 0) {
      this.#lagging.set(path, lag - 1);
      req.resume();
      res.writeHead(404, { "content-type": "application/json" }).end(absentUser);
      return;
    }
    const upstream = request(
      {
        host: this.#target.hostname,
        port: this.#target.port,
        method,
        path: req.url,
        headers: { ...req.headers, host: this.#target.host },
        // A connection of its own per request: a kept-alive one can be closed by the broker's idle
        // timeout (5 s, as Node's agent) just as a request goes out, a "socket hang up" no broker sent.
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", (error) => {
      res.writeHead(502, { "content-type": "text/plain" }).end(`proxy: ${error.message}`);
    });
    req.pipe(upstream);
  }
}
