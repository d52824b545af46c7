import { describe, expect, it } from "vitest";
import type { z } from "zod";
import type { ManagementClient } from "../../rabbitmq/client.ts";
import { ManagementApiError } from "../../rabbitmq/errors.ts";
import { bindingEndsKey, fileItems, inVhostKey, listItems, permissionKey } from "./listing.ts";

/** A client that answers each GET from `answer` (by path, query included) and records the paths. */
function client(answer: (path: string) => unknown): { client: ManagementClient; paths: string[] } {
  const paths: string[] = [];
  const fake = {
    endpoint: "admin@fake",
    get: async (path: string, schema: z.ZodType) => {
      paths.push(path);
      return schema.parse(answer(path));
    },
  };
  return { client: fake as unknown as ManagementClient, paths };
}

const queue = (vhost: string, name: string) => ({
  name,
  vhost,
  durable: true,
  auto_delete: false,
  arguments: {},
});

describe("listing a broker's objects", () => {
  it("asks for the whole list, without statistics and with the compared columns, in one request", async () => {
    const { client: broker, paths } = client(() => [queue("a", "q1"), queue("b", "q1")]);
    const items = await listItems(broker, "queues");
    expect(items.map((q) => `${q.vhost}/${q.name}`)).toEqual(["a/q1", "b/q1"]);
    expect(paths).toHaveLength(1);
    const query = new URL(paths[0] ?? "", "http://x").searchParams;
    expect(Object.fromEntries(query)).toEqual({
      disable_stats: "true",
      columns: "name,vhost,type,durable,auto_delete,arguments",
    });
    const permissions = client(() => [{ user: "u", vhost: "v", configure: "", write: ".*", read: ".*" }]);
    expect(await listItems(permissions.client, "permissions")).toHaveLength(1);
    expect(permissions.paths).toEqual(["/api/permissions"]);
  });

  /** A broker that pages every list, 2 a page unless asked otherwise. */
  const paging = (all: ReturnType<typeof queue>[], fail?: (page: number) => boolean) =>
    client((path) => {
      const query = new URL(path, "http://x").searchParams;
      const page = Number(query.get("page") ?? 1);
      const size = Number(query.get("page_size") ?? 2);
      if (fail?.(page)) throw new ManagementApiError("GET", path, 400, "page_out_of_range");
      const items = all.slice((page - 1) * size, page * size);
      return { items, page, page_count: Math.ceil(all.length / size), page_size: size };
    });

  it("follows the pages of a broker that pages anyway, from the first, 500 a page", async () => {
    const all = Array.from({ length: 501 }, (_, i) => queue("a", `q${i}`));
    const { client: broker, paths } = paging(all);
    expect((await listItems(broker, "queues")).map((q) => q.name)).toEqual(all.map((q) => q.name));
    expect(paths.map((p) => new URL(p, "http://x").searchParams.get("page"))).toEqual([null, "1", "2"]);
    expect(new URL(paths[1] ?? "", "http://x").searchParams.get("page_size")).toBe("500");
  });

  it("takes a single page as the whole list", async () => {
    const { client: broker, paths } = paging([queue("a", "q1")]);
    expect(await listItems(broker, "queues")).toHaveLength(1);
    expect(paths).toHaveLength(1);
  });

  it("ends the list at a page that went out of range while it was read", async () => {
    const all = Array.from({ length: 600 }, (_, i) => queue("a", `q${i}`));
    const { client: broker } = paging(all, (page) => page === 2);
    expect(await listItems(broker, "queues")).toHaveLength(500);
  });

  it("fails on an answer that is no list", async () => {
    const { client: broker } = client(() => ({ error: "nope" }));
    await expect(listItems(broker, "vhosts")).rejects.toThrow();
  });

  it("refuses a list with an item its schema refuses, naming the item", async () => {
    const all: unknown[] = Array.from({ length: 600 }, (_, i) => queue("a", `q${i}`));
    all[555] = { ...queue("a", "q555"), durable: "yes" };
    const { client: broker } = client(() => all);
    await expect(listItems(broker, "queues")).rejects.toThrow(
      /^GET \/api\/queues\?.*: unexpected answer: item 555: .*boolean/,
    );
  });

  it("lets the event loop turn while it checks a long list", async () => {
    const { client: broker } = client(() => Array.from({ length: 1_000 }, (_, i) => queue("a", `q${i}`)));
    let turned = false;
    setImmediate(() => (turned = true));
    const listed = listItems(broker, "queues").then((items) => ({ items: items.length, turned }));
    await expect(listed).resolves.toEqual({ items: 1_000, turned: true });
  });

  it("files each list by the names a read back addresses its objects by", () => {
    expect(fileItems("queues", [queue("a", "q1")]).get(inVhostKey("a", "q1"))?.name).toBe("q1");
    const permissions = fileItems("permissions", [
      { user: "u", vhost: "v", configure: "", write: "", read: "" },
    ]);
    expect(permissions.has(permissionKey("v", "u"))).toBe(true);
    expect(fileItems("vhost-limits", [{ vhost: "v", value: { "max-queues": 3 } }]).get("v")).toEqual({
      "max-queues": 3,
    });
    const binding = (routing_key: string) => ({
      vhost: "v",
      source: "x",
      destination: "q",
      destination_type: "queue",
      routing_key,
      arguments: {},
    });
    const bindings = fileItems("bindings", [binding("a"), binding("b")]);
    expect(bindings.get(bindingEndsKey("v", "x", "queue", "q"))?.map((b) => b.routing_key)).toEqual([
      "a",
      "b",
    ]);
  });
});
