import { describe, expect, it } from "vitest";
import { bindingBody } from "./binding.ts";
import { exchangeBody } from "./exchange.ts";
import { limitDifferences } from "./limits.ts";
import { SHA512_ALGORITHM, verifyPassword } from "../../rabbitmq/password.ts";
import { permissionBody } from "./permission.ts";
import { policyBody } from "./policy.ts";
import { queueBody } from "./queue.ts";
import { userBody } from "./user.ts";
import { vhostBody } from "./vhost.ts";

describe("upstream's mapping of each kind onto a request body", () => {
  it("vhost: tags joined by commas, default queue type under both keys, tracing", () => {
    expect(vhostBody({ name: "v", tags: ["a", "b"], defaultQueueType: "quorum", tracing: true })).toEqual({
      tags: "a,b",
      default_queue_type: "quorum",
      defaultqueuetype: "quorum",
      tracing: true,
    });
    expect(vhostBody({ name: "v", description: "d" })).toEqual({
      description: "d",
      tags: "",
      tracing: false,
    });
  });

  it("user: a salted SHA-512 hash of the password, never the password", () => {
    const body = userBody({ username: "u", credentials: { password: "plain-pw" }, tags: ["management"] });
    expect(body).toMatchObject({ hashing_algorithm: SHA512_ALGORITHM, tags: "management" });
    expect(JSON.stringify(body)).not.toContain("plain-pw");
    expect(verifyPassword("plain-pw", body.password_hash ?? "", SHA512_ALGORITHM)).toBe(true);
    expect(userBody({ username: "u", credentials: { passwordHash: "abc=" } })).toEqual({
      password_hash: "abc=",
      hashing_algorithm: SHA512_ALGORITHM,
      tags: "",
    });
  });

  it("permission: missing patterns are empty", () => {
    expect(permissionBody({ user: "u", vhost: "v", permissions: { read: ".*" } })).toEqual({
      configure: "",
      write: "",
      read: ".*",
    });
  });

  it("queue: type in the body and as x-queue-type, durable by default", () => {
    expect(queueBody({ name: "q", type: "quorum", arguments: { "x-max-length": 5 } })).toEqual({
      type: "quorum",
      durable: true,
      auto_delete: false,
      arguments: { "x-max-length": 5, "x-queue-type": "quorum" },
    });
    expect(queueBody({ name: "q", durable: false, autoDelete: true })).toEqual({
      durable: false,
      auto_delete: true,
      arguments: {},
    });
  });

  it("exchange, binding and policy: upstream's defaults", () => {
    expect(exchangeBody({ name: "x" })).toEqual({
      type: "direct",
      durable: false,
      auto_delete: false,
      arguments: {},
    });
    expect(bindingBody({ source: "s", destination: "d", destinationType: "queue" })).toEqual({
      routing_key: "",
      arguments: {},
    });
    expect(policyBody({ name: "p", pattern: ".*", definition: { ha: 1 } })).toEqual({
      pattern: ".*",
      "apply-to": "all",
      priority: 0,
      definition: { ha: 1 },
    });
  });

  it("limits: a set limit that differs and an unset limit still present both differ", () => {
    const desired = { "max-connections": 5, "max-queues": undefined };
    expect(limitDifferences(desired, { "max-connections": 5 })).toEqual([]);
    expect(limitDifferences(desired, { "max-connections": 4, "max-queues": 1 })).toEqual([
      "limits.max-connections",
      "limits.max-queues",
    ]);
  });
});
