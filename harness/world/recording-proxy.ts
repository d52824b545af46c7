// An HTTP proxy in front of one backend for one operator process, recording every request it forwards:
// its method, path, when it arrived, when it went on to the backend and when the backend's answer ended.
// One proxy per process tells a test which process sent what and when (two replicas share one
// kubeconfig identity and one OpenBao token, so the backends themselves cannot tell them apart). A
// delay holds each request before it is forwarded: a slow backend. The Kubernetes API's proxy ends TLS
// with the local API server's own serving certificate (so the kubeconfig's CA still verifies it) and
// goes on with the local kubeconfig's client certificate. A proxy that several processes share (the
// broker's management API, which a RabbitmqCluster names once for every replica) tells them apart by
// the process that owns each connection's client socket.
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { localEnv } from "./env.ts";

export interface ProxiedRequest {
  method: string;
  /** The request's path and query. */
  path: string;
  /** Date.now() when its head arrived at the proxy. */
  receivedAt: number;
  /** When the proxy sent it on to the backend (after the delay); undefined while it waits. */
  forwardedAt?: number;
  /** When the backend's answer ended (a watch: when the stream ended); undefined while it runs. */
  answeredAt?: number;
  status?: number;
  /** The start of the answer's body (1 KiB) when it was an error (400 and above): the API's Status. */
  message?: string;
  /** The process that owns the connection's client socket, among the proxy's candidates. */
  clientPid?: number;
}

/** The inode of the local TCP socket on `localPort` connected to `remotePort`, from /proc/net/tcp{,6}. */
function socketInode(localPort: number, remotePort: number): string | undefined {
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const port = (address: string | undefined) => parseInt(address?.split(":").pop() ?? "", 16);
      if (port(fields[1]) === localPort && port(fields[2]) === remotePort) return fields[9];
    }
  }
  return undefined;
}

/** Which of `pids` holds the socket with `inode` open (a process gone meanwhile holds nothing). */
function socketOwner(inode: string, pids: readonly number[]): number | undefined {
  const link = `socket:[${inode}]`;
  return pids.find((pid) => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`) === link;
        } catch {
          return false;
        }
      });
    } catch {
      return false;
    }
  });
}

interface Upstream {
  protocol: "http:" | "https:";
  host: string;
  port: number;
  agent: http.Agent;
}

export class RecordingProxy {
  readonly requests: ProxiedRequest[] = [];
  /** How long each request waits before it is forwarded; may change while the proxy runs. */
  delayMs = 0;
  /**
   * The processes that may connect, when several share the proxy: each connection is attributed to the
   * one that owns its client socket (read from /proc when it is accepted), and its requests carry it.
   */
  candidates: () => readonly number[] = () => [];
  /** Owners of the open connections, by their client port (a TLS request's socket wraps the TCP one). */
  private readonly owners = new Map<number, number>();
  private readonly server: http.Server;
  private readonly upstream: Upstream;
  private readonly sockets = new Set<Socket>();

  private constructor(server: http.Server, upstream: Upstream) {
    this.server = server;
    this.upstream = upstream;
    server.on("request", (req, res) => this.forward(req, res));
    server.on("connection", (socket: Socket) => {
      this.sockets.add(socket);
      const pids = this.candidates();
      const clientPort = socket.remotePort ?? 0;
      const inode = pids.length > 0 ? socketInode(clientPort, this.port) : undefined;
      const owner = inode === undefined ? undefined : socketOwner(inode, pids);
      if (owner !== undefined) {
        this.owners.set(clientPort, owner);
        socket.on("close", () => this.owners.delete(clientPort));
      }
      socket.on("close", () => this.sockets.delete(socket));
    });
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** A plain HTTP proxy to `url` (OpenBao, a management API). */
  static async http(url: string): Promise<RecordingProxy> {
    const { hostname, port } = new URL(url);
    const proxy = new RecordingProxy(http.createServer(), {
      protocol: "http:",
      host: hostname,
      port: Number(port),
      agent: new http.Agent({ keepAlive: true }),
    });
    return proxy.listen();
  }

  /**
   * An HTTPS proxy to the local management API server (see above). `credentials: "client"` goes on
   * without the admin certificate, with what the client sent (its service account token): the API
   * server authorizes the client, and the record shows each refusal (a 403) with its path.
   */
  static async kubeApi(options: { credentials?: "admin" | "client" } = {}): Promise<RecordingProxy> {
    const pki = join(localEnv().LOCALENV_STATE, "pki");
    const kubeconfig = readFileSync(localEnv().KUBECONFIG, "utf8");
    const server = /server: (https:\/\/\S+)/.exec(kubeconfig)?.[1];
    if (!server) throw new Error("the local kubeconfig names no https server");
    const { hostname, port } = new URL(server);
    const read = (name: string) => readFileSync(join(pki, name));
    const proxy = new RecordingProxy(
      https.createServer({ cert: read("serving.crt"), key: read("serving.key") }),
      {
        protocol: "https:",
        host: hostname,
        port: Number(port),
        agent: new https.Agent({
          keepAlive: true,
          ca: read("ca.crt"),
          ...(options.credentials === "client" ? {} : { cert: read("admin.crt"), key: read("admin.key") }),
        }),
      },
    );
    return proxy.listen();
  }

  /** Writes the local kubeconfig with its server replaced by this proxy to `path`; returns `path`. */
  writeKubeconfig(path: string): string {
    const kubeconfig = readFileSync(localEnv().KUBECONFIG, "utf8");
    writeFileSync(
      path,
      kubeconfig.replace(/server: https:\/\/\S+/, `server: https://127.0.0.1:${this.port}`),
    );
    return path;
  }

  /** The requests that change something (every method but GET, HEAD and OPTIONS). */
  writes(): ProxiedRequest[] {
    return this.requests.filter((r) => !["GET", "HEAD", "OPTIONS"].includes(r.method));
  }

  /** Refuses new connections, cuts the open ones. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.upstream.agent.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return this;
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const record: ProxiedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      receivedAt: Date.now(),
    };
    const owner = this.owners.get(req.socket.remotePort ?? 0);
    if (owner !== undefined) record.clientPid = owner;
    this.requests.push(record);
    let gone = false;
    let upstreamReq: http.ClientRequest | undefined;
    // The client went away (its process ended, or it aborted): so does the request to the backend.
    res.on("close", () => {
      gone = true;
      upstreamReq?.destroy();
    });
    const send = () => {
      if (gone) return;
      const { protocol, host, port, agent } = this.upstream;
      const options: http.RequestOptions = {
        host,
        port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: `${host}:${port}` },
        agent,
      };
      const answer = (upstreamRes: http.IncomingMessage) => {
        record.status = upstreamRes.statusCode;
        if ((upstreamRes.statusCode ?? 0) >= 400) {
          let body = "";
          upstreamRes.on("data", (chunk: Buffer) => {
            if (body.length < 1024) record.message = body = (body + chunk.toString("utf8")).slice(0, 1024);
          });
        }
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.on("end", () => (record.answeredAt = Date.now()));
        upstreamRes.on("error", () => res.destroy());
        upstreamRes.pipe(res);
      };
      upstreamReq = protocol === "https:" ? https.request(options, answer) : http.request(options, answer);
      upstreamReq.on("error", () => {
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      });
      record.forwardedAt = Date.now();
      req.pipe(upstreamReq);
    };
    if (this.delayMs > 0) setTimeout(send, this.delayMs);
    else send();
  }
}

/**
 * The requests the API server refused for want of a permission: its 403s, less the writes into a
 * namespace being deleted, which it refuses with a 403 whoever asks.
 */
export function refusedByRbac(requests: readonly ProxiedRequest[]): ProxiedRequest[] {
  return requests.filter((r) => r.status === 403 && !r.message?.includes("because it is being terminated"));
}
