// The built-in controllers' Events: a new object's first status is one Event, its Ready condition's.
import { describe, expect, it } from "vitest";
import { firstStatusOnce } from "./external-events.ts";

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
