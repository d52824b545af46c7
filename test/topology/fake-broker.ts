// The management API in memory, behind ManagementClient's public methods, for fast whole-pass tests:
// objects by path (the query left off), bindings as the lists the API answers, no limits unless PUT,
// and every request recorded. Not evidence that a broker takes a request: the integration suites are.
import type { z } from "zod";
import {
  ManagementApiError,
  ManagementNotFoundError,
  type DeleteOutcome,
  type ManagementClient,
  type ManagementClients,
  type ManagementConnection,
} from "../../src/topology/broker/index.ts";

const withoutQuery = (path: string): string => path.split("?")[0] ?? path;

const listedResources = new Set([
  "vhosts",
  "vhost-limits",
  "users",
  "user-limits",
  "permissions",
  "queues",
  "exchanges",
  "bindings",
  "policies",
]);

interface Binding {
  routing_key: string;
  arguments: Record<string, unknown>;
  properties_key: string;
}

export class FakeBroker {
  private readonly objects = new Map<string, unknown>();
  /** Every request, in order: `METHOD path`, the query left off. */
  readonly requests: string[] = [];
  /** The base URL of every client asked for, in order. */
  readonly urls: string[] = [];

  /** As deps.clients: every connection reaches this broker. */
  clients(): ManagementClients {
    const client = this.client();
    const clients = {
      client: (connection: ManagementConnection) => {
        this.urls.push(connection.url);
        return client;
      },
    };
    return clients as unknown as ManagementClients;
  }

  private readonly refusals = new Map<string, ManagementApiError>();

  /** Every PUT and DELETE of `path` is refused with a 4xx until `allow(path)`. */
  refuse(path: string, status: number, reason: string): void {
    this.refusals.set(path, new ManagementApiError("PUT", path, status, reason));
  }

  allow(path: string): void {
    this.refusals.delete(path);
  }

  has(path: string): boolean {
    const stored = this.objects.get(path);
    return Array.isArray(stored) ? stored.length > 0 : stored !== undefined;
  }

  /** What the broker holds at `path`. */
  objectAt(path: string): unknown {
    return structuredClone(this.objects.get(path));
  }

  /** Someone else's change on the broker, or what it reports: the object at `path` is `body`. */
  store(path: string, body: unknown): void {
    this.objects.set(path, structuredClone(body));
  }

  /** Someone else's change on the broker: the object at `path` is gone. */
  remove(path: string): void {
    this.objects.delete(path);
  }

  count(method: string, path: string): number {
    return this.requests.filter((r) => r === `${method} ${path}`).length;
  }

  private client(): ManagementClient {
    const get = async <S extends z.ZodType>(path: string, schema: S): Promise<z.infer<S>> => {
      const key = this.enter("GET", path);
      const listed = this.listed(key);
      if (listed) return schema.parse(listed);
      const stored = this.objects.get(key);
      if (stored !== undefined) return schema.parse(stored);
      // A vhost or user without limits answers an empty list.
      if (/^\/api\/(vhost|user)-limits\/[^/]+$/.test(key)) return schema.parse([]);
      throw new ManagementNotFoundError("GET", key, 404, "Object Not Found");
    };
    const client = {
      username: "admin",
      endpoint: "admin@fake",
      get,
      async find<S extends z.ZodType>(path: string, schema: S): Promise<z.infer<S> | undefined> {
        try {
          return await get(path, schema);
        } catch (error) {
          if (error instanceof ManagementNotFoundError) return undefined;
          throw error;
        }
      },
      put: async (path: string, body: unknown): Promise<void> => {
        const key = this.admitted("PUT", path);
        // As the broker answers a GET: the object under its name (the path's last segment).
        const named =
          body && typeof body === "object" && !Array.isArray(body) && !/-limits\//.test(key)
            ? { name: decodeURIComponent(key.slice(key.lastIndexOf("/") + 1)), ...body }
            : body;
        this.objects.set(key, structuredClone(named));
      },
      post: async (path: string, body: unknown): Promise<void> => {
        const key = this.enter("POST", path);
        const listed = (this.objects.get(key) ?? []) as Binding[];
        const binding = body as Omit<Binding, "properties_key">;
        const propertiesKey = binding.routing_key || "~";
        if (!listed.some((b) => b.properties_key === propertiesKey)) {
          this.objects.set(key, [...listed, { ...binding, properties_key: propertiesKey }]);
        }
      },
      delete: async (path: string): Promise<DeleteOutcome> => {
        const key = this.admitted("DELETE", path);
        if (this.objects.delete(key)) return "deleted";
        const slash = key.lastIndexOf("/");
        const listed = this.objects.get(key.slice(0, slash));
        if (!Array.isArray(listed)) return "absent";
        const propertiesKey = decodeURIComponent(key.slice(slash + 1));
        const left = (listed as Binding[]).filter((b) => b.properties_key !== propertiesKey);
        this.objects.set(key.slice(0, slash), left);
        return left.length < listed.length ? "deleted" : "absent";
      },
    };
    return client as unknown as ManagementClient;
  }

  /**
   * A list endpoint's answer (`/api/vhosts`, `/api/bindings`, …), whole as RabbitMQ 3.10 answers its
   * unpaged lists, built from the objects held under it; undefined for any other path.
   */
  private listed(key: string): unknown[] | undefined {
    const resource = /^\/api\/([a-z-]+)$/.exec(key)?.[1];
    if (!resource || !listedResources.has(resource)) return undefined;
    const held = [...this.objects]
      .filter(([path]) => path.startsWith(`/api/${resource}/`))
      .map(([path, body]) => ({
        names: path.slice(`/api/${resource}/`.length).split("/").map(decodeURIComponent),
        body: structuredClone(body) as Record<string, unknown>,
      }));
    if (resource === "vhost-limits" || resource === "user-limits") {
      const owner = resource === "vhost-limits" ? "vhost" : "user";
      const byOwner = new Map<string, Record<string, unknown>>();
      for (const { names, body } of held) {
        const [name = "", limit = ""] = names;
        byOwner.set(name, { ...byOwner.get(name), [limit]: body["value"] });
      }
      return [...byOwner].map(([name, value]) => ({ [owner]: name, value }));
    }
    if (resource === "bindings") {
      return held.flatMap(({ names: [vhost, , source, type, destination], body }) =>
        (body as unknown as Binding[]).map((b) => ({
          ...b,
          vhost,
          source,
          destination,
          destination_type: type === "q" ? "queue" : "exchange",
        })),
      );
    }
    if (resource === "permissions") {
      return held.map(({ names: [vhost, user], body }) => ({ ...body, vhost, user }));
    }
    if (resource === "vhosts" || resource === "users") return held.map(({ body }) => body);
    return held.map(({ names: [vhost, name], body }) => ({ ...body, vhost, name }));
  }

  /** As enter, for a request the broker may refuse. */
  private admitted(method: string, path: string): string {
    const key = this.enter(method, path);
    const refusal = this.refusals.get(key);
    if (refusal) throw refusal;
    return key;
  }

  private enter(method: string, path: string): string {
    const key = withoutQuery(path);
    this.requests.push(`${method} ${key}`);
    return key;
  }
}
