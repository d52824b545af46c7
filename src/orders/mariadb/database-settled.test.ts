import { describe, expect, it } from "vitest";
import { databaseSettled } from "./database-settled.ts";

const database = (cleanupPolicy: string | undefined, finalizers?: string[]) => ({
  apiVersion: "mariadb.osh.openstack.org/v1alpha1",
  kind: "Database",
  metadata: { name: "db", namespace: "openstack", ...(finalizers ? { finalizers } : {}) },
  spec: { name: "db", ...(cleanupPolicy ? { cleanupPolicy } : {}) },
});

describe("databaseSettled", () => {
  it("is settled at once when the Database is not dropped on delete", () => {
    expect(databaseSettled(database(undefined))).toBe(true);
    expect(databaseSettled(database("Skip"))).toBe(true);
  });

  it("under Delete waits for a controller's finalizer, whichever backend sets it", () => {
    expect(databaseSettled(database("Delete"))).toBe(false);
    expect(databaseSettled(database("Delete", ["mariadb.osh.openstack.org/database-cleanup"]))).toBe(true);
    expect(databaseSettled(database("Delete", ["database.k8s.mariadb.com/finalizer"]))).toBe(true);
  });

  it("does not count the API server's own finalizers as a controller's", () => {
    expect(databaseSettled(database("Delete", ["orphan"]))).toBe(false);
    expect(databaseSettled(database("Delete", ["foregroundDeletion", "kubernetes.io/pv-protection"]))).toBe(
      false,
    );
  });
});
