import { describe, expect, it } from "vitest";
import { lanedBy, slowEndpointEvent } from "../external/index.ts";
import { sql, sqlLane } from "./backend.ts";
import { sqlDatabaseKind } from "../api/index.ts";

const object = (ref: unknown, namespace = "cp") => ({
  metadata: { name: "d", namespace },
  spec: { mariaDbRef: ref },
});

describe("sqlLane", () => {
  it("is the MariaDB the ref names, in the object's namespace unless it names another", () => {
    expect(sqlLane(object({ name: "mariadb" }))).toBe("MariaDB cp/mariadb");
    expect(sqlLane(object({ name: "mariadb", namespace: "db" }))).toBe("MariaDB db/mariadb");
  });

  it("is the common lane for an object not cached or naming no MariaDB", () => {
    expect(sqlLane(undefined)).toBe("");
    expect(sqlLane(object({}))).toBe("");
    expect(sqlLane({ metadata: { name: "d" } })).toBe("");
  });
});

describe("the slow server's Event", () => {
  it("names the server, how long it held its passes, and that other servers go on", () => {
    expect(
      slowEndpointEvent(
        "Database",
        { lane: "MariaDB cp/hung", running: 1, waiting: ["a"], slowForMs: 5_400 },
        sql.lane.words,
      ),
    ).toEqual({
      type: "Warning",
      reason: "MariaDBSlow",
      action: "Waiting",
      note: "MariaDB cp/hung is slow: 1 pass of its Databases has waited 5 s for it; this Database waits its turn in that server's lane (1 waiting), while objects of other servers go on",
    });
  });
});

describe("a SQL kind's lanes", () => {
  const cachedObject = object({ name: "hung" });
  const manager = { cached: () => cachedObject };
  const recorded: unknown[] = [];
  const lanes = {
    workers: 2,
    endpoints: 3,
    slowAfterMs: 5_000,
    record: (...args: unknown[]) => recorded.push(args),
  };

  it("gives each server the kind's workers, for so many servers at once", () => {
    const spec = lanedBy(manager, sqlDatabaseKind, sql.lane.of, sql.lane.words, lanes);
    expect(spec.workers).toBe(6);
    expect(spec.lanes?.budget).toBe(2);
    expect(spec.lanes?.of({ cluster: "", namespace: "cp", name: "d" })).toBe("MariaDB cp/hung");
  });

  it("records the Event on the waiting object", () => {
    const spec = lanedBy(manager, sqlDatabaseKind, sql.lane.of, sql.lane.words, lanes);
    spec.lanes?.slow(
      { cluster: "", namespace: "cp", name: "d" },
      {
        lane: "MariaDB cp/hung",
        running: 2,
        waiting: ["x"],
        slowForMs: 6_000,
      },
    );
    expect(recorded).toHaveLength(1);
    expect((recorded[0] as unknown[])[1]).toBe(cachedObject);
  });
});
