import { describe, expect, it } from "vitest";
import { declaringView, refKey, resolveServer, type DeclaringView } from "./resolve.ts";

const cp = (name: string, mariadb?: string, secret = "db-admin", namespace = "cp"): DeclaringView => ({
  namespace,
  name,
  database: mariadb ? { mariadb, secret } : undefined,
});
const ref = { namespace: "cp", name: "mariadb" };
const fallback = { settingsServer: true, wasDeclared: false };

describe("refKey", () => {
  it("defaults the ref's namespace to the object's", () => {
    expect(refKey({ name: "m" }, "app")).toEqual({ namespace: "app", name: "m" });
    expect(refKey({ name: "m", namespace: "db" }, "app")).toEqual({ namespace: "db", name: "m" });
    expect(refKey(undefined, "app")).toEqual({ namespace: "app", name: "" });
  });
});

describe("declaringView", () => {
  it("reads a ControlPlane's database declaration, and nothing from what does not parse", () => {
    const raw = {
      metadata: { namespace: "cp", name: "one" },
      spec: { infrastructure: { database: { clusterRef: { name: "mariadb" }, secretRef: { name: "s" } } } },
    };
    expect(declaringView(raw)).toEqual({
      namespace: "cp",
      name: "one",
      database: { mariadb: "mariadb", secret: "s" },
    });
    expect(declaringView({ metadata: { namespace: "cp", name: "two" }, spec: {} })?.database).toBeUndefined();
    expect(declaringView({ spec: 3 })).toBeUndefined();
  });
});

describe("resolveServer", () => {
  it("takes the credentials Secret of the ControlPlane that declares the MariaDB", () => {
    expect(resolveServer(ref, [cp("other", "elsewhere", "x"), cp("one", "mariadb")], fallback)).toEqual({
      outcome: "declared",
      secret: { namespace: "cp", name: "db-admin" },
      by: ["one"],
    });
  });

  it("takes ControlPlanes of the ref's namespace only", () => {
    expect(resolveServer(ref, [cp("one", "mariadb", "s", "elsewhere")], fallback)).toEqual({
      outcome: "settings",
    });
  });

  it("agrees with several ControlPlanes that name the same Secret, and waits when they name different ones", () => {
    expect(resolveServer(ref, [cp("b", "mariadb"), cp("a", "mariadb")], fallback)).toMatchObject({
      outcome: "declared",
      by: ["a", "b"],
    });
    const split = resolveServer(ref, [cp("a", "mariadb", "s1"), cp("b", "mariadb", "s2")], fallback);
    expect(split).toEqual({
      outcome: "unresolved",
      reason:
        "MariaDB cp/mariadb is declared by ControlPlanes a, b with different credentials Secrets (s1, s2); waiting until they agree",
    });
  });

  it("goes to the settings' server for a ref no ControlPlane declares, as before ControlPlanes declared servers", () => {
    expect(resolveServer(ref, [cp("none")], fallback)).toEqual({ outcome: "settings" });
  });

  it("leaves a ref unresolved without a settings' server, and one that was declared before never falls back", () => {
    expect(resolveServer(ref, [], { settingsServer: false, wasDeclared: false })).toMatchObject({
      outcome: "unresolved",
      reason: expect.stringContaining("no ControlPlane of namespace cp declares MariaDB cp/mariadb"),
    });
    expect(resolveServer(ref, [], { settingsServer: true, wasDeclared: true })).toMatchObject({
      outcome: "unresolved",
      reason: expect.stringContaining("is no longer declared by a ControlPlane"),
    });
    expect(resolveServer({ namespace: "cp", name: "" }, [], fallback)).toMatchObject({
      outcome: "unresolved",
    });
  });
});
