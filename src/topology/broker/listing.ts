// A broker's state read by its list endpoints, one endpoint at a time, each answer filed by the names
// a read back addresses the object by. Each list is asked for whole: RabbitMQ builds the whole list for
// every page it answers (5,000 queues on 3.10: 0.13 s a page of 500, 0.19 s the whole list), so pages
// cost the square of the objects. A broker that answers a page anyway is followed page by page, at
// most 500 a page. The statistics are left out where the broker offers to. The items are checked
// against their schema a slice at a time, the event loop turning in between: 10,000 of them take about
// 0.2 s, which would hold up every other pass of the process, urgent ones too.
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { z } from "zod";
import type { ManagementClient } from "../../rabbitmq/client.ts";
import { ManagementApiError, ManagementResponseError } from "../../rabbitmq/errors.ts";
import { withQuery } from "../../rabbitmq/paths.ts";
import {
  exchangeSchema,
  permissionSchema,
  policySchema,
  queueSchema,
  userSchema,
  vhostSchema,
} from "./schemas.ts";

/** The management API's largest page. */
export const PAGE_SIZE = 500;

/** Items checked between two turns of the event loop. */
const CHECK_SLICE = 250;

const limits = <K extends "vhost" | "user">(owner: K) =>
  z
    .looseObject({ value: z.record(z.string(), z.number()) })
    .extend(({ vhost: { vhost: z.string() }, user: { user: z.string() } } as const)[owner]);

const listed = {
  vhosts: vhostSchema,
  "vhost-limits": limits("vhost"),
  users: userSchema,
  "user-limits": limits("user"),
  permissions: permissionSchema.extend({ user: z.string(), vhost: z.string() }),
  queues: queueSchema.extend({ vhost: z.string() }),
  exchanges: exchangeSchema.extend({ vhost: z.string() }),
  bindings: z.looseObject({
    vhost: z.string(),
    source: z.string(),
    destination: z.string(),
    destination_type: z.string(),
    routing_key: z.string(),
    arguments: z.record(z.string(), z.unknown()),
  }),
  policies: policySchema.extend({ name: z.string(), vhost: z.string() }),
};

export type ListedResource = keyof typeof listed;
export type ListedItem<R extends ListedResource> = z.infer<(typeof listed)[R]>;

/** Only the fields a comparison reads, where the endpoint takes `columns`: less to parse and to hold. */
const columns: Partial<Record<ListedResource, string>> = {
  vhosts: "name,description,tags,default_queue_type,tracing",
  queues: "name,vhost,type,durable,auto_delete,arguments",
  exchanges: "name,vhost,type,durable,auto_delete,arguments",
};

/** A broker's listed objects by key (see the *Key functions), one map per list endpoint. */
export interface BrokerListing {
  vhosts: Map<string, ListedItem<"vhosts">>;
  /** By vhost: its limits; a vhost without any is not listed. */
  "vhost-limits": Map<string, Record<string, number>>;
  users: Map<string, ListedItem<"users">>;
  /** By user: its limits; a user without any is not listed. */
  "user-limits": Map<string, Record<string, number>>;
  permissions: Map<string, ListedItem<"permissions">>;
  queues: Map<string, ListedItem<"queues">>;
  exchanges: Map<string, ListedItem<"exchanges">>;
  /** Every binding between the same two ends. */
  bindings: Map<string, ListedItem<"bindings">[]>;
  policies: Map<string, ListedItem<"policies">>;
}

// Keys of names inside a vhost; NUL is in no name the broker takes.
const key = (...parts: string[]) => parts.join("\u0000");
export const inVhostKey = (vhost: string, name: string): string => key(vhost, name);
export const permissionKey = (vhost: string, user: string): string => key(vhost, user);
export const bindingEndsKey = (vhost: string, source: string, type: string, destination: string): string =>
  key(vhost, source, type, destination);

function byKey<T>(items: T[], keyOf: (item: T) => string): Map<string, T> {
  return new Map(items.map((item) => [keyOf(item), item]));
}

/** Every item of one list endpoint: whole, or page by page where the broker pages it. */
export async function listItems<R extends ListedResource>(
  client: ManagementClient,
  resource: R,
): Promise<ListedItem<R>[]> {
  // The table pairs each endpoint with its schema; TypeScript cannot follow the pairing through R.
  const item = listed[resource] as unknown as z.ZodType<ListedItem<R>>;
  const answer = z.union([
    z.array(z.unknown()),
    z.looseObject({ items: z.array(z.unknown()), page: z.number(), page_count: z.number() }),
  ]);
  const path = (page?: number) =>
    withQuery(`/api/${resource}`, {
      page: page === undefined ? undefined : String(page),
      page_size: page === undefined ? undefined : String(PAGE_SIZE),
      disable_stats: resource in columns ? "true" : undefined,
      columns: columns[resource],
    });
  const whole = await client.get(path(), answer);
  if (Array.isArray(whole)) return checkItems(whole, item, path());
  if (whole.page >= whole.page_count) return checkItems(whole.items, item, path());
  // Paged at a size of the broker's choosing: read again from the first page, at the largest size.
  const items: ListedItem<R>[] = [];
  for (let page = 1; ; page++) {
    let body: z.infer<typeof answer>;
    try {
      body = await client.get(path(page), answer);
    } catch (error) {
      // Objects deleted since the first page can leave the last one out of range (400): the list ends.
      if (page > 1 && error instanceof ManagementApiError && error.status === 400) return items;
      throw error;
    }
    if (Array.isArray(body)) return checkItems(body, item, path(page));
    items.push(...(await checkItems(body.items, item, path(page))));
    if (body.page >= body.page_count || body.items.length === 0) return items;
  }
}

/** The items of a list checked against their schema, CHECK_SLICE at a time. */
async function checkItems<T>(items: unknown[], schema: z.ZodType<T>, path: string): Promise<T[]> {
  const checked: T[] = [];
  for (const [i, value] of items.entries()) {
    if (i > 0 && i % CHECK_SLICE === 0) await yieldToEventLoop();
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      const why = parsed.error.issues[0]?.message ?? "invalid";
      throw new ManagementResponseError(`GET ${path}: unexpected answer: item ${i}: ${why}`);
    }
    checked.push(parsed.data);
  }
  return checked;
}

/** One list endpoint of the broker, filed by key. */
export async function listResource<R extends ListedResource>(
  client: ManagementClient,
  resource: R,
): Promise<BrokerListing[R]> {
  return fileItems(resource, await listItems(client, resource));
}

const filers: { [R in ListedResource]: (items: ListedItem<R>[]) => BrokerListing[R] } = {
  vhosts: (items) => byKey(items, (v) => v.name),
  "vhost-limits": (items) => new Map(items.map((l) => [l.vhost, l.value])),
  users: (items) => byKey(items, (u) => u.name),
  "user-limits": (items) => new Map(items.map((l) => [l.user, l.value])),
  permissions: (items) => byKey(items, (p) => permissionKey(p.vhost, p.user)),
  queues: (items) => byKey(items, (q) => inVhostKey(q.vhost, q.name)),
  exchanges: (items) => byKey(items, (e) => inVhostKey(e.vhost, e.name)),
  policies: (items) => byKey(items, (p) => inVhostKey(p.vhost, p.name)),
  bindings: (items) => {
    const between = new Map<string, ListedItem<"bindings">[]>();
    for (const b of items) {
      const ends = bindingEndsKey(b.vhost, b.source, b.destination_type, b.destination);
      const known = between.get(ends);
      if (known) known.push(b);
      else between.set(ends, [b]);
    }
    return between;
  },
};

/** The items of one list endpoint filed as BrokerListing holds them. */
export function fileItems<R extends ListedResource>(resource: R, items: ListedItem<R>[]): BrokerListing[R] {
  return filers[resource](items);
}
