import { describe, expect, it } from "vitest";
import { namespacesOutOfReach, outOfReachText } from "./secret-reach.ts";

describe("namespacesOutOfReach", () => {
  it("leaves every namespace in reach without a list", () => {
    expect(namespacesOutOfReach(undefined, ["a"])).toEqual([]);
    expect(namespacesOutOfReach([], ["a", "b"])).toEqual([]);
  });

  it("names each needed namespace the list leaves out, once and in order", () => {
    expect(namespacesOutOfReach(["b"], ["a", "b", "c", "a"])).toEqual(["a", "c"]);
    expect(namespacesOutOfReach(["a", "b"], ["b", "a"])).toEqual([]);
    expect(namespacesOutOfReach(["a"], [])).toEqual([]);
  });
});

describe("outOfReachText", () => {
  it("names the namespaces and the chart's value", () => {
    expect(outOfReachText(["a", "b"])).toBe(
      `the operator may not use Secrets in namespace "a" and namespace "b" of the management cluster (not among secret-namespaces, the chart's rbac.secretNamespaces)`,
    );
  });
});
