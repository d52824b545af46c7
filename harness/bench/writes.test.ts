// The writes table: each write named by what it is in the order's life, the Lease kept out of the
// orders' total, and what another process wrote counted apart.
import { describe, expect, it } from "vitest";
import type { Counters } from "./backend.ts";
import { writeMeaning, writesTable } from "./writes.ts";

const counters = (apiWrites: number, apiWritesBy: Record<string, number>) =>
  ({ apiWrites, apiWritesBy }) as unknown as Counters;

describe("writeMeaning", () => {
  it("names the order's, its children's, Events, Secrets and the Lease", () => {
    expect(writeMeaning("rabbitmqvhosts.c5c3.io status patch")).toBe("order status");
    expect(writeMeaning("rabbitmqvhosts.c5c3.io - patch")).toBe("order finalizer add/remove");
    expect(writeMeaning("users.rabbitmq.com - apply")).toBe("child apply (user)");
    expect(writeMeaning("permissions.rabbitmq.com status patch")).toBe("child status (permission)");
    expect(writeMeaning("vhosts.rabbitmq.com - delete")).toBe("child delete (vhost)");
    expect(writeMeaning("events - create")).toBe("Event create");
    expect(writeMeaning("secrets - apply")).toBe("Secret apply");
    expect(writeMeaning("leases.coordination.k8s.io - update")).toMatch(/^Lease/);
    expect(writeMeaning("configmaps - create")).toBe("configmaps - create");
  });
});

describe("writesTable", () => {
  it("puts the most frequent write first and sums the orders' writes without the Lease", () => {
    const table = writesTable([
      {
        label: "cold start",
        counters: counters(3, {
          "rabbitmqvhosts.c5c3.io status patch": 2,
          "events - create": 1,
          "leases.coordination.k8s.io - update": 0.5,
        }),
      },
      { label: "rotation", counters: counters(7, { "events - create": 3 }) },
    ]);
    const rows = table.split("\n").slice(2);
    expect(rows[0]).toMatch(/^\| Event create .*\| 1\.00 .*\| 3\.00 /);
    expect(rows[1]).toMatch(/^\| order status .*\| 2\.00 .*\| 0 /);
    expect(rows.find((r) => r.includes("orders' writes"))).toMatch(/\| 3\.00 .*\| 3\.00 /);
    // The rotation's 7 writes of which it names 3: the other 4 another process made.
    expect(rows.at(-1)).toMatch(/another process.*\| 0 .*\| 4\.00 /);
  });
});
