import { describe, expect, it } from "vitest";
import { childStateOf, childrenOf, passwordStateOf, type ChildObject } from "./children.ts";
import { gen } from "../../../../harness/fakes/generation-fixtures.ts";

const ready = { type: "Ready", status: "True" };
const refused = { type: "Ready", status: "False", reason: "FailedCreateOrUpdate", message: "broker said no" };

describe("childStateOf", () => {
  const cases: [string, ChildObject | undefined, ReturnType<typeof childStateOf>][] = [
    ["not listed", undefined, { phase: "absent" }],
    ["no status yet", { metadata: { generation: 1 } }, { phase: "pending" }],
    [
      "Ready, caught up",
      { metadata: { generation: 2 }, status: { observedGeneration: 2, conditions: [ready] } },
      { phase: "ready" },
    ],
    [
      "Ready for an older spec",
      { metadata: { generation: 3 }, status: { observedGeneration: 2, conditions: [ready] } },
      { phase: "pending" },
    ],
    ["Ready without generations", { status: { conditions: [ready] } }, { phase: "ready" }],
    [
      "refused, caught up",
      { metadata: { generation: 1 }, status: { observedGeneration: 1, conditions: [refused] } },
      { phase: "refused", message: "broker said no" },
    ],
    [
      "refused for an older spec",
      { metadata: { generation: 2 }, status: { observedGeneration: 1, conditions: [refused] } },
      { phase: "pending" },
    ],
    [
      "Ready False for another reason",
      {
        metadata: { generation: 1 },
        status: { observedGeneration: 1, conditions: [{ type: "Ready", status: "False", reason: "Other" }] },
      },
      { phase: "pending" },
    ],
    [
      "Ready Unknown",
      {
        metadata: { generation: 1 },
        status: { observedGeneration: 1, conditions: [{ type: "Ready", status: "Unknown" }] },
      },
      { phase: "pending" },
    ],
    [
      "being deleted, even when Ready",
      {
        metadata: { generation: 1, deletionTimestamp: "2030-01-01T00:00:00Z" },
        status: { observedGeneration: 1, conditions: [ready] },
      },
      { phase: "deleting" },
    ],
  ];
  it.each(cases)("%s", (_name, object, expected) => {
    expect(childStateOf(object)).toEqual(expected);
  });

  it("keeps an empty message for a refusal without one", () => {
    const object = {
      metadata: { generation: 1 },
      status: {
        observedGeneration: 1,
        conditions: [{ type: "Ready", status: "False", reason: "FailedCreateOrUpdate" }],
      },
    };
    expect(childStateOf(object)).toEqual({ phase: "refused", message: "" });
  });
});

describe("passwordStateOf", () => {
  it.each([
    ["not listed", undefined, "absent"],
    ["no data", {}, "empty"],
    ["no password key", { data: { username: "dQ==" } }, "empty"],
    ["empty password", { data: { password: "" } }, "empty"],
    ["a password", { data: { password: Buffer.from("s3cret").toString("base64") } }, "present"],
  ] as const)("%s", (_name, secret, expected) => {
    expect(passwordStateOf(secret)).toBe(expected);
  });
});

describe("childrenOf", () => {
  it("finds a listed generation and reads a missing one as all absent", () => {
    const listed = [gen(1), gen(2, "empty", "pending", "absent")];
    expect(childrenOf(listed, 2)).toBe(listed[1]);
    expect(childrenOf(listed, 5)).toEqual(gen(5, "absent", "absent", "absent"));
  });
});
