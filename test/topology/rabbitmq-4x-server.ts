// A local HTTP server that answers the management requests of the Vhost and Queue kinds and the
// successor check's user read as a RabbitMQ 4.3 broker does, with the answers of
// fixtures/rabbitmq-4x.ts, and the lists of vhosts, their limits and queues a verification reads. It
// holds vhosts (with their deletion protection), queues and users, checks the basic-auth login, and
// records every request; a request it does
// not know is answered 404 and listed in `unknown`, so a test sees what it did not expect.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import * as fixtures from "./fixtures/rabbitmq-4x.ts";
import type { RecordedAnswer, UserRecord, VhostRecord } from "./fixtures/rabbitmq-4x.ts";

export interface QueueRecord {
  durable: boolean;
  auto_delete: boolean;
  arguments: Record<string, unknown>;
  type: string;
}

const node = "rabbit@fake-4x";

export class Rabbitmq4xServer {
  /** Every request, in order: `METHOD /path` as sent (percent-encoded, no query). */
  readonly requests: string[] = [];
  readonly unknown: string[] = [];
  readonly vhosts = new Map<string, VhostRecord>([["/", vhostRecord({})]]);
  /** Keyed by `vhost/name`, both decoded. */
  readonly queues = new Map<string, QueueRecord>();
  readonly users = new Map<string, UserRecord>();
  /** Reads of a user still to answer as absent: a node whose Khepri copy lags the PUT (4.2 on). */
  readonly #lagging = new Map<string, number>();
  readonly #server: Server;
  readonly #authorization: string;

  private constructor(username: string, password: string) {
    this.#authorization = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
    this.#server = createServer((req, res) => {
      void this.#handle(req, res);
    });
  }

  static async start(username: string, password: string): Promise<Rabbitmq4xServer> {
    const server = new Rabbitmq4xServer(username, password);
    await new Promise<void>((resolve) => server.#server.listen(0, "127.0.0.1", resolve));
    return server;
  }

  get url(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The next `reads` GETs of `user` answer 404, as a node that has not applied its PUT yet. */
  lag(user: string, reads: number): void {
    this.#lagging.set(user, reads);
  }

  queue(vhost: string, name: string): QueueRecord | undefined {
    return this.queues.get(`${vhost}/${name}`);
  }

  count(request: string): number {
    return this.requests.filter((r) => r === request).length;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake");
    const method = req.method ?? "GET";
    this.requests.push(`${method} ${url.pathname}`);
    const body = await readBody(req);
    let answer: RecordedAnswer;
    if (req.headers.authorization !== this.#authorization) {
      // Not a fixture: a wrong login is a broken test set-up, not a behaviour under test.
      answer = {
        status: 401,
        headers: { "content-type": "application/json" },
        body: '{"error":"not_authorized"}',
      };
    } else {
      answer = this.#answer(method, url, body) ?? this.#unknown(method, url);
    }
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  }

  #unknown(method: string, url: URL): RecordedAnswer {
    this.unknown.push(`${method} ${url.pathname}`);
    return fixtures.objectNotFound();
  }

  #answer(method: string, url: URL, body: unknown): RecordedAnswer | undefined {
    const segments = url.pathname.split("/").slice(1).map(decodeURIComponent);
    const [api, resource, vhost = "", name, ...rest] = segments;
    if (api !== "api") return undefined;
    if (method === "GET" && segments.length === 2) return this.#list(resource, url.searchParams);
    if (resource === "vhosts" && name === undefined) return this.#vhost(method, vhost, body);
    if (resource === "vhosts" && name === "deletion" && rest.join("/") === "protection") {
      return this.#protection(method, vhost);
    }
    if (resource === "vhost-limits" && method === "GET" && name === undefined) {
      return this.vhosts.has(vhost) ? fixtures.noLimits() : fixtures.objectNotFound();
    }
    if (resource === "queues" && name !== undefined && rest.length === 0) {
      return this.#queue(method, vhost, name, body, url.searchParams.get("columns")?.split(","));
    }
    if (resource === "users" && name === undefined) return this.#user(method, vhost);
    return undefined;
  }

  /** The list endpoints a verification reads (each vhost without limits). */
  #list(resource: string | undefined, query: URLSearchParams): RecordedAnswer | undefined {
    const body = (answer: RecordedAnswer) => JSON.parse(answer.body) as Record<string, unknown>;
    if (resource === "vhost-limits") return fixtures.noLimits();
    if (resource === "vhosts") {
      const items = [...this.vhosts].map(([name, vhost]) => body(fixtures.vhostAnswer(name, vhost, node)));
      return fixtures.pagedAnswer(items, query);
    }
    if (resource === "queues") {
      const items = [...this.queues].map(([key, queue]) => {
        const [vhost = "", ...name] = key.split("/");
        return body(fixtures.queueAnswer({ name: name.join("/"), vhost, ...queue }, undefined));
      });
      return fixtures.pagedAnswer(items, query);
    }
    return undefined;
  }

  #vhost(method: string, name: string, body: unknown): RecordedAnswer | undefined {
    const current = this.vhosts.get(name);
    if (method === "GET")
      return current ? fixtures.vhostAnswer(name, current, node) : fixtures.objectNotFound();
    if (method === "PUT") {
      // 4.x merges the new metadata into the old: a PUT keeps the deletion protection.
      this.vhosts.set(name, vhostRecord(fields(body), current?.protectedFromDeletion ?? false));
      return current ? fixtures.noContent() : fixtures.created();
    }
    if (method === "DELETE") {
      if (!current) return fixtures.objectNotFound();
      if (current.protectedFromDeletion) return fixtures.vhostProtectedFromDeletion(name);
      this.vhosts.delete(name);
      for (const key of this.queues.keys()) if (key.startsWith(`${name}/`)) this.queues.delete(key);
      return fixtures.noContent();
    }
    return undefined;
  }

  #user(method: string, name: string): RecordedAnswer | undefined {
    if (method === "DELETE" && name === "guest") return fixtures.objectNotFound();
    if (method !== "GET") return undefined;
    const lag = this.#lagging.get(name) ?? 0;
    if (lag > 0) this.#lagging.set(name, lag - 1);
    const user = this.users.get(name);
    return user && lag === 0 ? fixtures.userAnswer(name, user) : fixtures.objectNotFound();
  }

  /** POST protects, DELETE lifts (rabbit_mgmt_wm_vhost_deletion_protection). */
  #protection(method: string, name: string): RecordedAnswer | undefined {
    const current = this.vhosts.get(name);
    if (method !== "POST" && method !== "DELETE") return undefined;
    if (!current) return fixtures.objectNotFound();
    current.protectedFromDeletion = method === "POST";
    return fixtures.noContent();
  }

  #queue(
    method: string,
    vhost: string,
    name: string,
    body: unknown,
    columns: string[] | undefined,
  ): RecordedAnswer | undefined {
    const key = `${vhost}/${name}`;
    const current = this.queues.get(key);
    if (method === "GET") {
      return current ? fixtures.queueAnswer({ name, vhost, ...current }, columns) : fixtures.objectNotFound();
    }
    if (method === "DELETE") {
      if (!current) return fixtures.objectNotFound();
      this.queues.delete(key);
      return fixtures.noContent();
    }
    if (method !== "PUT") return undefined;
    const vhostRecord = this.vhosts.get(vhost);
    if (!vhostRecord) return fixtures.vhostNotFound();
    const props = fields(body);
    const durable = props["durable"] !== false;
    if (!durable) return fixtures.transientQueueRefused();
    const args = (props["arguments"] ?? {}) as Record<string, unknown>;
    const type = String(args["x-queue-type"] ?? props["type"] ?? vhostRecord.defaultQueueType);
    this.queues.set(key, { durable, auto_delete: props["auto_delete"] === true, arguments: args, type });
    return current ? fixtures.noContent() : fixtures.created();
  }
}

function vhostRecord(body: Record<string, unknown>, protectedFromDeletion = false): VhostRecord {
  const tags = body["tags"];
  return {
    description: typeof body["description"] === "string" ? body["description"] : "",
    tags:
      typeof tags === "string"
        ? tags.split(",").filter(Boolean)
        : Array.isArray(tags)
          ? tags.map(String)
          : [],
    defaultQueueType: String(body["default_queue_type"] ?? body["defaultqueuetype"] ?? "classic"),
    tracing: body["tracing"] === true,
    protectedFromDeletion,
  };
}

function fields(body: unknown): Record<string, unknown> {
  return body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
