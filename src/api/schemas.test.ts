// The generated zod schemas accept what the API server stores and refuse what it would refuse.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { examplesDirectory, examplesOf, typeNameOf } from "../../scripts/gen-api.ts";
import * as api from "./index.ts";

const kinds = [...api.shippedKinds, api.rabbitmqClusterKind, api.mariaDBKind];
const schemas: Record<string, { safeParse: (value: unknown) => { success: boolean } }> = {
  RabbitMQVhost: api.RabbitMQVhostSchema,
  MariaDBDatabase: api.MariaDBDatabaseSchema,
  MariaDB: api.MariaDBSchema,
  ControlPlane: api.ControlPlaneSchema,
  Vhost: api.VhostSchema,
  User: api.UserSchema,
  Permission: api.PermissionSchema,
  Queue: api.QueueSchema,
  Exchange: api.ExchangeSchema,
  Binding: api.BindingSchema,
  Policy: api.PolicySchema,
  RabbitmqCluster: api.RabbitmqClusterSchema,
  SqlDatabase: api.SqlDatabaseSchema,
  SqlUser: api.SqlUserSchema,
  SqlGrant: api.SqlGrantSchema,
  SqlConnection: api.SqlConnectionSchema,
};

describe("zod schemas", () => {
  it.each(kinds.map((k) => typeNameOf(k)))("parse every documented %s example", (typeName) => {
    const ref = kinds.find((k) => typeNameOf(k) === typeName);
    expect(schemas[typeName], typeName).toBeDefined();
    for (const example of ref ? examplesOf(ref) : []) {
      // The seed's example names its namespaces by placeholders, which its suite substitutes.
      const text = readFileSync(join(examplesDirectory, example.file), "utf8");
      const object: unknown = parse(
        text.replaceAll("@TENANT_NS@", "tenant-a").replaceAll("@CP_NS@", "openstack"),
      );
      expect(schemas[typeName]?.safeParse(object).success, example.file).toBe(true);
    }
  });

  it("read an order as the API server returns it, defaults and status included", () => {
    const order = api.RabbitMQVhostSchema.parse({
      apiVersion: "c5c3.io/v1alpha1",
      kind: "RabbitMQVhost",
      metadata: { name: "workflow", namespace: "tenant-a", generation: 3 },
      spec: {
        controlPlaneRef: { name: "cp" },
        passwordGeneration: 1,
        rotation: { interval: "720h", gracePeriod: "24h" },
        deletionPolicy: "Retain",
      },
      status: {
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "AllReady",
            message: "",
            lastTransitionTime: "2025-01-01T00:00:00Z",
          },
        ],
        vhost: "workflow-cebe0e7a",
        passwordGeneration: 1,
        secretKeys: ["transport_url", "host", "port", "username", "password", "vhost"],
      },
    });
    expect(order.spec.rotation?.interval).toBe("720h");
    expect(order.status?.vhost).toBe("workflow-cebe0e7a");
  });

  it("refuse what the CRD's schema refuses", () => {
    const spec = (s: Record<string, unknown>) => api.RabbitMQVhostSpecSchema.safeParse(s).success;
    expect(spec({ controlPlaneRef: { name: "cp" } })).toBe(true);
    expect(spec({ controlPlaneRef: { name: "" } })).toBe(false);
    expect(spec({ controlPlaneRef: { name: "cp", namespace: "Bad_NS" } })).toBe(false);
    expect(spec({ controlPlaneRef: { name: "cp" }, passwordGeneration: 0 })).toBe(false);
    expect(spec({ controlPlaneRef: { name: "cp" }, deletionPolicy: "Drop" })).toBe(false);
    expect(spec({ controlPlaneRef: { name: "cp" }, rotation: { interval: "three minutes" } })).toBe(false);
    expect(
      api.UserSpecSchema.safeParse({ rabbitmqClusterReference: { name: "x" }, tags: ["root"] }).success,
    ).toBe(false);
  });

  it("keep free-form arguments and definitions", () => {
    const queue = api.QueueSpecSchema.parse({
      name: "q",
      rabbitmqClusterReference: { name: "test" },
      arguments: { "x-max-length": 10, "x-overflow": "reject-publish" },
    });
    expect(queue.arguments).toEqual({ "x-max-length": 10, "x-overflow": "reject-publish" });
  });
});
