import { describe, expect, it } from "vitest";
import { MariaDBDatabaseSchema, RabbitMQVhostSchema } from "../../api/index.ts";
import { GenerationOutOfRange, checkGeneration } from "./naming.ts";
import { issuesText, parseOrder, readOrder, stalledStatus } from "./order-schema.ts";

const kind = { parse: (raw: unknown) => parseOrder(RabbitMQVhostSchema, raw) };
const order = (spec: Record<string, unknown>, status?: Record<string, unknown>) => ({
  metadata: { name: "o", namespace: "t", generation: 3, deletionTimestamp: "2026-01-01T00:00:00Z" },
  spec: { controlPlaneRef: { name: "cp", namespace: "cps" }, ...spec },
  ...(status ? { status } : {}),
});
const ready = {
  type: "Ready",
  status: "True",
  reason: "AllReady",
  message: "all ready",
  observedGeneration: 2,
  lastTransitionTime: "2026-01-01T00:00:00Z",
};

describe("parseOrder", () => {
  it("takes a passwordGeneration up to 10^15 and names the field above it", () => {
    expect(kind.parse(order({ passwordGeneration: 1e15 })).order?.spec.passwordGeneration).toBe(1e15);
    for (const g of [1e15 + 1, 2 ** 53 - 1, 1733000000000000000]) {
      const read = kind.parse(order({ passwordGeneration: g }));
      expect(read.order).toBeUndefined();
      expect(new Set(read.issues?.map((i) => i.path))).toEqual(new Set(["spec.passwordGeneration"]));
    }
  });
  it("refuses a rotation window the runtime cannot use, on both kinds", () => {
    const window = { schedule: "0 2 * * *", timeZone: "Atlantis/Capital", duration: "1h" };
    for (const schema of [RabbitMQVhostSchema, MariaDBDatabaseSchema]) {
      const read = parseOrder(schema, order({ rotation: { interval: "24h", window } }));
      expect(read.order).toBeUndefined();
      expect(read.issues).toEqual([
        { path: "spec.rotation.window.timeZone", message: 'unknown time zone "Atlantis/Capital"' },
      ]);
      const usable = parseOrder(
        schema,
        order({ rotation: { window: { ...window, timeZone: "Europe/Berlin" } } }),
      );
      expect(usable.order?.spec.rotation?.window?.timeZone).toBe("Europe/Berlin");
    }
  });
  it("bounds a MariaDBDatabase's the same", () => {
    const read = parseOrder(MariaDBDatabaseSchema, order({ passwordGeneration: 2 ** 53 - 1 }));
    expect(read.issues?.map((i) => i.path)).toEqual(["spec.passwordGeneration"]);
    expect(parseOrder(MariaDBDatabaseSchema, order({ passwordGeneration: 1e15 })).order).toBeDefined();
  });
});

describe("readOrder", () => {
  it("reads an order the schema takes as it is, with no issues", () => {
    const read = readOrder(kind, order({ passwordGeneration: 4, deletionPolicy: "Delete" }));
    expect(read.issues).toEqual([]);
    expect(read.order?.spec.passwordGeneration).toBe(4);
  });

  it("drops only the refused fields: the teardown reads the rest of the spec as it says", () => {
    const read = readOrder(
      kind,
      order({ passwordGeneration: 1733000000000000000, deletionPolicy: "Delete" }, { conditions: [ready] }),
    );
    expect(read.order?.spec).toEqual({
      controlPlaneRef: { name: "cp", namespace: "cps" },
      deletionPolicy: "Delete",
    });
    expect(read.order?.status?.conditions).toHaveLength(1);
    expect(read.order?.metadata.deletionTimestamp).toBe("2026-01-01T00:00:00Z");
    expect(issuesText(read.issues)).toMatch(/^spec\.passwordGeneration: /);
  });

  it("drops a refused status field and keeps the others", () => {
    const read = readOrder(
      kind,
      order({}, { passwordGeneration: 2 ** 53 - 1, vhost: "o-1", conditions: [ready] }),
    );
    expect(read.order?.status).toEqual({ vhost: "o-1", conditions: [ready] });
    expect(read.issues.map((i) => i.path)).toEqual(["status.passwordGeneration"]);
  });

  it("drops a refused rotation window with the rotation, and says why (the order stalls with InvalidObject)", () => {
    const window = { schedule: "0 0 31 4 *", duration: "1h" };
    const read = readOrder(kind, order({ rotation: { interval: "24h", window }, deletionPolicy: "Delete" }));
    expect(read.order?.spec).toEqual({
      controlPlaneRef: { name: "cp", namespace: "cps" },
      deletionPolicy: "Delete",
    });
    expect(issuesText(read.issues)).toBe('spec.rotation.window.schedule: "0 0 31 4 *" never matches');
  });

  it("reads no order when what identifies its ControlPlane is refused", () => {
    const read = readOrder(kind, { metadata: { name: "o" }, spec: { controlPlaneRef: { name: "" } } });
    expect(read.order).toBeUndefined();
    expect(read.issues.map((i) => i.path)).toEqual(["spec.controlPlaneRef.name"]);
  });
});

describe("stalledStatus", () => {
  it("says why in Ready and Stalled and keeps every other field as stored", () => {
    const stored = { passwordGeneration: 2 ** 53 - 1, vhost: "o-1", conditions: [ready] };
    const why = { status: "False" as const, reason: "InvalidObject", message: "refused" };
    const status = stalledStatus(stored, why, 3, Date.parse("2026-02-01T00:00:00Z"));
    expect(status.passwordGeneration).toBe(2 ** 53 - 1);
    expect(status.vhost).toBe("o-1");
    const byType = Object.fromEntries((status.conditions ?? []).map((c) => [c.type, c]));
    expect(byType["Ready"]).toMatchObject({
      status: "False",
      reason: "InvalidObject",
      observedGeneration: 3,
    });
    expect(byType["Stalled"]).toMatchObject({ status: "True", reason: "InvalidObject", message: "refused" });
    expect(byType["Reconciling"]).toMatchObject({ status: "False", reason: "Stalled" });
  });
});

describe("checkGeneration", () => {
  it("refuses a generation past 2^53-1 as out of range, not as a programming error", () => {
    expect(checkGeneration(2 ** 53 - 1)).toBe(2 ** 53 - 1);
    expect(() => checkGeneration(2 ** 53)).toThrow(GenerationOutOfRange);
    expect(() => checkGeneration(0)).toThrow(RangeError);
  });
});
