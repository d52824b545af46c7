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
  it("follows the pages of a paged list, 500 a page, without statistics and with the compared columns", async () => {
    const pages = [[queue("a", "q1"), queue("a", "q2")], [queue("b", "q1")]];
    const { client: broker, paths } = client((path) => {
      const page = Number(new URL(path, "http://x").searchParams.get("page"));
      return { items: pages[page - 1], page, page_count: 2, page_size: 500, total_count: 3 };
    });
    const items = await listItems(broker, "queues");
    expect(items.map((q) => `${q.vhost}/${q.name}`)).toEqual(["a/q1", "a/q2", "b/q1"]);
    expect(paths).toHaveLength(2);
    const query = new URL(paths[0] ?? "", "http://x").searchParams;
    expect(Object.fromEntries(query)).toEqual({
      page: "1",
      page_size: "500",
      disable_stats: "true",
      columns: "name,vhost,type,durable,auto_delete,arguments",
    });
  });

  it("takes a list the broker answers whole (3.10's users, permissions, limits, bindings, policies) in one request", async () => {
    const { client: broker, paths } = client(() => [
      { user: "u", vhost: "v", configure: "", write: ".*", read: ".*" },
    ]);
    expect(await listItems(broker, "permissions")).toHaveLength(1);
    expect(paths).toEqual(["/api/permissions?page=1&page_size=500"]);
  });

  it("ends the list at a page that went out of range while it was read", async () => {
    const { client: broker } = client((path) => {
      const page = Number(new URL(path, "http://x").searchParams.get("page"));
      if (page === 2) throw new ManagementApiError("GET", path, 400, "page_out_of_range");
      return { items: [queue("a", "q1")], page, page_count: 2 };
    });
    expect(await listItems(broker, "queues")).toHaveLength(1);
  });

  it("fails on an answer that is no list", async () => {
    const { client: broker } = client(() => ({ error: "nope" }));
    await expect(listItems(broker, "vhosts")).rejects.toThrow();
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
