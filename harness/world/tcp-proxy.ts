// A TCP proxy between the operator and a backend, so that a test can take the backend away from the
// operator (and give it back on the same port) without stopping the shared one other tests use.
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { freePort } from "./ports.ts";

export class TcpProxy {
  readonly port: number;
  private readonly target: { host: string; port: number };
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private holding = false;

  private constructor(port: number, target: { host: string; port: number }) {
    this.port = port;
    this.target = target;
  }

  /** A running proxy to `url`'s host and port. */
  static async to(url: string): Promise<TcpProxy> {
    const { hostname, port } = new URL(url);
    const proxy = new TcpProxy(await freePort(), { host: hostname, port: Number(port) });
    await proxy.start();
    return proxy;
  }

  /** Listens (again) on the proxy's port; a running proxy is left as it is. */
  async start(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      if (this.holding) {
        // Accepted, and never answered: what is sent is read and dropped.
        this.sockets.add(client);
        client.on("close", () => this.sockets.delete(client));
        client.on("error", () => undefined);
        client.resume();
        return;
      }
      const upstream = createConnection(this.target);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.server = server;
  }

  /**
   * A backend that accepts TCP and never answers (until unhold()): the open connections are cut, new
   * ones are accepted and left without a byte.
   */
  hold(): void {
    this.holding = true;
    for (const s of this.sockets) s.destroy();
  }

  /** Answers again: new connections reach the backend; the held ones are cut. */
  unhold(): void {
    this.holding = false;
    for (const s of this.sockets) s.destroy();
  }

  /** Refuses new connections and cuts the open ones: the backend is down as far as the operator knows. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}
