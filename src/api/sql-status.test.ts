import { describe, expect, it } from "vitest";
import { SqlDatabaseSchema } from "./generated.ts";
import { sqlReadiness } from "./sql-status.ts";

const at = (generation: number, condition?: object) => ({
  metadata: { generation },
  status: condition ? { conditions: [condition as never] } : {},
});
const condition = (status: string, observedGeneration: number) => ({
  type: "Ready",
  status,
  reason: status === "True" ? "Reconciled" : "ReconcileError",
  message: status === "True" ? "created database cinder" : "Unknown database",
  lastTransitionTime: "2026-08-03T19:20:00Z",
  observedGeneration,
});

describe("readiness of a SQL kind", () => {
  it("is Ready True at the object's generation", () => {
    expect(sqlReadiness(at(3, condition("True", 3)))).toEqual({
      ready: true,
      message: "created database cinder",
    });
    expect(sqlReadiness(at(4, condition("True", 3)))).toEqual({
      ready: false,
      reason: "Reconciled",
      message: "the Ready condition is of an earlier generation",
    });
    expect(sqlReadiness(at(3, condition("False", 3)))).toMatchObject({
      ready: false,
      reason: "ReconcileError",
    });
    expect(sqlReadiness(at(1))).toMatchObject({ ready: false, message: "no Ready condition yet" });
  });

  it("reads a Database as the API server returns it", () => {
    const database = SqlDatabaseSchema.parse({
      metadata: { name: "cinder", generation: 2 },
      spec: {
        mariaDbRef: { name: "mariadb" },
        characterSet: "utf8",
        collate: "utf8_general_ci",
        cleanupPolicy: "Skip",
      },
      status: { conditions: [condition("True", 2)] },
    });
    expect(sqlReadiness(database).ready).toBe(true);
  });
});
