import { describe, expect, it } from "vitest";
import { notFinalizersOnly, specOrMetadataChanged } from "./predicates.ts";

const order = (generation: number, extra: Record<string, unknown> = {}, status = "False") => ({
  metadata: { name: "o", generation, resourceVersion: String(Math.random()), labels: { a: "1" }, ...extra },
  status: { conditions: [{ type: "Ready", status }] },
});

describe("specOrMetadataChanged", () => {
  it("drops a status write and passes a spec, label, finalizer or deletion change", () => {
    expect(specOrMetadataChanged(order(1), order(1, {}, "True"))).toBe(false);
    expect(specOrMetadataChanged(order(1), order(2))).toBe(true);
    expect(specOrMetadataChanged(order(1), order(1, { labels: { a: "2" } }))).toBe(true);
    expect(specOrMetadataChanged(order(1), order(1, { annotations: { x: "y" } }))).toBe(true);
    expect(specOrMetadataChanged(order(1), order(1, { finalizers: ["f"] }))).toBe(true);
    expect(specOrMetadataChanged(order(1), order(1, { deletionTimestamp: "2026-01-01T00:00:00Z" }))).toBe(
      true,
    );
  });

  it("passes every update of a kind without a generation (a Secret's data)", () => {
    const secret = (v: string) => ({ metadata: { name: "s", resourceVersion: v }, data: { k: v } });
    expect(specOrMetadataChanged(secret("1"), secret("2"))).toBe(true);
  });
});

describe("notFinalizersOnly", () => {
  const child = (extra: Record<string, unknown> = {}, status = "False") => ({
    metadata: { name: "c", generation: 1, resourceVersion: String(Math.random()), ...extra },
    spec: { name: "v" },
    status: { conditions: [{ type: "Ready", status }] },
  });

  it("drops an update that only added or removed a finalizer", () => {
    expect(
      notFinalizersOnly(child(), child({ finalizers: ["deletion.finalizers.vhosts.rabbitmq.com"] })),
    ).toBe(false);
    expect(notFinalizersOnly(child({ finalizers: ["f"] }), child())).toBe(false);
  });

  it("passes a status, label, spec or deletion change, with or without a finalizer change", () => {
    expect(notFinalizersOnly(child(), child({}, "True"))).toBe(true);
    expect(notFinalizersOnly(child(), child({ labels: { a: "1" } }))).toBe(true);
    expect(notFinalizersOnly(child(), { ...child(), spec: { name: "w" } })).toBe(true);
    expect(
      notFinalizersOnly(child({ finalizers: ["f"] }), child({ deletionTimestamp: "2026-01-01T00:00:00Z" })),
    ).toBe(true);
  });
});
