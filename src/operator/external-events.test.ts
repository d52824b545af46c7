// The built-in controllers' Events: a new object's first status is one Event, its Ready condition's;
// an order's children are known by their label.
import { describe, expect, it } from "vitest";
import { firstStatusOnce, isOrderChild } from "./external-events.ts";

const condition = (type: string, status: "True" | "False") => ({
  type,
  status,
  reason: `${type}${status}`,
  message: "",
  observedGeneration: 1,
});

describe("firstStatusOnce", () => {
  const ready = condition("Ready", "True");
  const synced = condition("PasswordSynced", "True");

  it("keeps only Ready of a new object's conditions", () => {
    expect(firstStatusOnce(undefined, [ready, synced])).toEqual([ready]);
    expect(firstStatusOnce([], [ready, synced])).toEqual([ready]);
  });

  it("keeps every condition of an object that had a status, and of one without Ready", () => {
    expect(firstStatusOnce([ready], [ready, condition("PasswordSynced", "False")])).toHaveLength(2);
    expect(firstStatusOnce(undefined, [synced])).toEqual([synced]);
  });
});

describe("isOrderChild", () => {
  it("knows a child of either order kind by its label, and an object a person made by its lack", () => {
    expect(isOrderChild({ name: "u", labels: { "c5c3.io/rabbitmqvhost-name": "o" } })).toBe(true);
    expect(isOrderChild({ name: "g", labels: { "c5c3.io/mariadbdatabase-name": "o" } })).toBe(true);
    expect(isOrderChild({ name: "q", labels: { app: "x" } })).toBe(false);
    expect(isOrderChild({ name: "q" })).toBe(false);
  });
});
