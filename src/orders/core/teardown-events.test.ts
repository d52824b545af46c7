import { describe, expect, it } from "vitest";
import { TeardownEvents } from "./teardown-events.ts";

const target = (uid: string) => ({ cluster: "", namespace: "tenant", name: "billing", uid });

describe("the teardown's events", () => {
  it("says Deleting and Deleted once, also when a pass finds the released order still in its cache", async () => {
    const said: string[] = [];
    const events = new TeardownEvents({ emit: (_target, event) => void said.push(event.reason) });

    await events.deleting(target("uid-1"), "RabbitMQVhost");
    await events.deleting(target("uid-1"), "RabbitMQVhost");
    await events.deleted(target("uid-1"), "RabbitMQVhost");
    // The cache has not caught up with the released finalizer: the next pass sees the same order.
    await events.deleting(target("uid-1"), "RabbitMQVhost");
    await events.deleted(target("uid-1"), "RabbitMQVhost");
    expect(said).toEqual(["Deleting", "Deleted"]);

    // An order of the same name created again is another object, with its own teardown.
    await events.deleting(target("uid-2"), "RabbitMQVhost");
    await events.deleted(target("uid-2"), "RabbitMQVhost");
    expect(said).toEqual(["Deleting", "Deleted", "Deleting", "Deleted"]);
  });
});
