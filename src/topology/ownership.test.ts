import { describe, expect, it } from "vitest";
import { decideOwnership } from "./ownership.ts";

describe("ownership", () => {
  const lookup = {
    cluster: async () => undefined,
    secret: async () => undefined,
    service: async () => undefined,
  };
  it("matches names with or without the namespace, and connection Secrets by setting", async () => {
    const ownership = {
      enabled: true,
      clusters: { serve: "names" as const, names: ["a", "ns2/b"] },
      connectionSecrets: false,
    };
    const decide = (ref: object, ns = "ns1") => decideOwnership({ ownership, lookup }, ref, ns);
    expect(await decide({ name: "a" })).toEqual({ decision: "served" });
    expect((await decide({ name: "b" })).decision).toBe("declined");
    expect(await decide({ name: "b", namespace: "ns2" })).toEqual({ decision: "served" });
    expect((await decide({ connectionSecret: { name: "s" } })).decision).toBe("declined");
  });
  it("cannot decide by annotation without the RabbitmqCluster", async () => {
    const ownership = {
      enabled: true,
      clusters: { serve: "annotated" as const, annotation: "x" },
      connectionSecrets: true,
    };
    expect((await decideOwnership({ ownership, lookup }, { name: "a" }, "ns")).decision).toBe("undecided");
  });
});
