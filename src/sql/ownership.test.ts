import { describe, expect, it } from "vitest";
import { sqlDatabaseKind } from "../api/index.ts";
import { sqlServes } from "./backend.ts";
import { decideOwnership, refSelection } from "./ownership.ts";
import { optionalSecret, pinnedReference } from "./unsupported.ts";

describe("ownership by mariaDbRef", () => {
  it("serves all, none, or the listed names in the object's namespace or the named one", () => {
    expect(decideOwnership(refSelection("all"), undefined, "a")).toEqual({ decision: "served" });
    expect(decideOwnership(refSelection("none"), { name: "mariadb" }, "a").decision).toBe("declined");
    const names = refSelection("names:mariadb,db/galera");
    expect(decideOwnership(names, { name: "mariadb" }, "a").decision).toBe("served");
    expect(decideOwnership(names, { name: "galera", namespace: "db" }, "a").decision).toBe("served");
    expect(decideOwnership(names, { name: "galera" }, "db").decision).toBe("served");
    expect(decideOwnership(names, { name: "galera" }, "a")).toEqual({
      decision: "declined",
      reason: "MariaDB a/galera is not in the served list",
    });
  });
});

describe("refused fields", () => {
  it("refuses the reference fields that pin a referent, and optional: true only", () => {
    expect(pinnedReference("spec.mariaDbRef", { uid: "" })).toBeUndefined();
    expect(pinnedReference("spec.mariaDbRef", { resourceVersion: "3" })).toBe(
      "spec.mariaDbRef.resourceVersion",
    );
    expect(optionalSecret("spec.passwordSecretKeyRef", { optional: false })).toBeUndefined();
    expect(optionalSecret("spec.passwordSecretKeyRef", { optional: true })).toBe(
      "spec.passwordSecretKeyRef.optional",
    );
  });
});

describe("which cached objects a SQL kind serves", () => {
  it("reads the object as the informer holds it, by its reference", () => {
    const database = {
      serves: (refs: ReturnType<typeof refSelection>, object: unknown) =>
        sqlServes(refs)(sqlDatabaseKind, object),
    };
    const object = (ref: string) => ({
      metadata: { name: "d", namespace: "a" },
      spec: { mariaDbRef: { name: ref } },
    });
    const names = refSelection("names:mariadb");
    expect(database.serves(names, object("mariadb"))).toBe(true);
    expect(database.serves(names, object("galera"))).toBe(false);
    expect(database.serves(names, { metadata: { name: "d" }, spec: "not an object" })).toBe(false);
  });
});
