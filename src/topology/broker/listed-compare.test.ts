import { describe, expect, it } from "vitest";
import { SHA512_ALGORITHM, hashPasswordSha512 } from "../../rabbitmq/password.ts";
import {
  listedBinding,
  listedExchange,
  listedPermission,
  listedPolicy,
  listedQueue,
  listedUser,
  listedVhost,
} from "./listed-compare.ts";
import { fileItems, type BrokerListing, type ListedItem, type ListedResource } from "./listing.ts";

/** A listing of what the broker holds, as listing.ts files it. */
function listing(held: { [R in ListedResource]?: ListedItem<R>[] }): BrokerListing {
  const file = <R extends ListedResource>(resource: R) => fileItems(resource, held[resource] ?? []);
  return {
    vhosts: file("vhosts"),
    "vhost-limits": file("vhost-limits"),
    users: file("users"),
    "user-limits": file("user-limits"),
    permissions: file("permissions"),
    queues: file("queues"),
    exchanges: file("exchanges"),
    bindings: file("bindings"),
    policies: file("policies"),
  };
}

const missing = { exists: false, matches: false, differences: [] };
const same = { exists: true, matches: true, differences: [] };

describe("a kind's read back answered from a listing", () => {
  it("vhost: as listed, missing, with a limit set behind the operator's back", () => {
    const spec = { name: "app", tags: ["t"], limits: { queues: 5 } };
    const held = listing({
      vhosts: [{ name: "app", tags: ["t"], tracing: false }],
      "vhost-limits": [{ vhost: "app", value: { "max-queues": 5 } }],
    });
    expect(listedVhost.compare(held, spec)).toEqual(same);
    expect(listedVhost.compare(listing({}), spec)).toEqual(missing);
    const limited = listing({
      vhosts: [{ name: "app", tags: ["t"], tracing: false }],
      "vhost-limits": [{ vhost: "app", value: { "max-queues": 5, "max-connections": 1 } }],
    });
    expect(listedVhost.compare(limited, spec).differences).toEqual(["limits.max-connections"]);
    // A vhost with no limits at all is not in the limits' list.
    expect(listedVhost.compare(held, { name: "app", tags: ["t"] }).differences).toEqual([
      "limits.max-queues",
    ]);
  });

  it("user: the listed hash verifies the password; tags and limits compared", () => {
    const user = (password: string) => ({
      name: "u",
      password_hash: hashPasswordSha512(password),
      hashing_algorithm: SHA512_ALGORITHM,
      tags: ["management"],
    });
    const spec = { username: "u", credentials: { password: "pw" }, tags: ["management"] };
    expect(listedUser.compare(listing({ users: [user("pw")] }), spec)).toEqual(same);
    expect(listedUser.compare(listing({ users: [user("other")] }), spec).differences).toEqual(["password"]);
    const limited = listing({
      users: [user("pw")],
      "user-limits": [{ user: "u", value: { "max-channels": 2 } }],
    });
    expect(listedUser.compare(limited, spec).differences).toEqual(["limits.max-channels"]);
    expect(listedUser.compare(listing({}), spec)).toEqual(missing);
  });

  it("permission: a changed pattern, and one gone with its vhost", () => {
    const spec = { user: "u", vhost: "app", permissions: { configure: ".*", write: ".*", read: ".*" } };
    const held = (write: string) =>
      listing({ permissions: [{ user: "u", vhost: "app", configure: ".*", write, read: ".*" }] });
    expect(listedPermission.compare(held(".*"), spec)).toEqual(same);
    expect(listedPermission.compare(held("^$"), spec).differences).toEqual(["write"]);
    expect(listedPermission.compare(listing({}), spec)).toEqual(missing);
    // Another vhost's permission of the same user is not this one.
    expect(listedPermission.compare(held(".*"), { ...spec, vhost: "other" })).toEqual(missing);
  });

  it("queue, exchange and policy: by vhost and name, the default vhost when none is given", () => {
    const queue = {
      name: "q",
      vhost: "/",
      type: "classic",
      durable: true,
      auto_delete: false,
      arguments: {},
    };
    expect(listedQueue.compare(listing({ queues: [queue] }), { name: "q" })).toEqual(same);
    expect(listedQueue.compare(listing({ queues: [queue] }), { name: "q", vhost: "app" })).toEqual(missing);
    expect(
      listedQueue.compare(listing({ queues: [queue] }), { name: "q", durable: false }).differences,
    ).toEqual(["durable"]);
    const exchange = {
      name: "x",
      vhost: "app",
      type: "topic",
      durable: true,
      auto_delete: false,
      arguments: {},
    };
    const spec = { name: "x", vhost: "app", type: "topic", durable: true };
    expect(listedExchange.compare(listing({ exchanges: [exchange] }), spec)).toEqual(same);
    expect(
      listedExchange.compare(listing({ exchanges: [exchange] }), { ...spec, type: "fanout" }).differences,
    ).toEqual(["type"]);
    const policy = {
      name: "p",
      vhost: "app",
      pattern: "^q",
      "apply-to": "queues",
      priority: 1,
      definition: { a: 1 },
    };
    const policySpec = {
      name: "p",
      vhost: "app",
      pattern: "^q",
      applyTo: "queues",
      priority: 1,
      definition: { a: 1 },
    };
    expect(listedPolicy.compare(listing({ policies: [policy] }), policySpec)).toEqual(same);
    expect(
      listedPolicy.compare(listing({ policies: [policy] }), { ...policySpec, definition: { a: 2 } })
        .differences,
    ).toEqual(["definition"]);
  });

  it("binding: one between the same ends with the same routing key and arguments", () => {
    const binding = (routing_key: string, args: Record<string, unknown>) => ({
      vhost: "app",
      source: "x",
      destination: "q",
      destination_type: "queue",
      routing_key,
      arguments: args,
    });
    const spec = {
      vhost: "app",
      source: "x",
      destination: "q",
      destinationType: "queue" as const,
      routingKey: "k",
      arguments: { a: 1 },
    };
    const held = listing({ bindings: [binding("other", {}), binding("k", { a: 1 })] });
    expect(listedBinding.compare(held, spec)).toEqual(same);
    expect(listedBinding.compare(held, { ...spec, arguments: { a: 2 } })).toEqual(missing);
    expect(listedBinding.compare(held, { ...spec, destinationType: "exchange" })).toEqual(missing);
  });
});
