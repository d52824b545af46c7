import { describe, expect, it } from "vitest";
import {
  backupPath,
  childLabels,
  childPrefix,
  childSelector,
  deliveredSecretLabels,
  deliveredSecretName,
  isOwnChild,
  orderHash,
  type OrderKey,
} from "../core/naming.ts";
import {
  childName,
  parseChildName,
  passwordSecretLabels,
  passwordSecretName,
  permissionChildName,
  RABBITMQ_NAMING,
  userChildName,
  userName,
  vhostChildName,
  vhostName,
} from "./naming.ts";

const onManagement: OrderKey = { cluster: "", namespace: "tenant-a", name: "workflow" };
const onEdge: OrderKey = { cluster: "edge-1", namespace: "tenant-a", name: "workflow" };

describe("the order hash and the names derived from it", () => {
  it("matches the reference vectors", () => {
    expect(orderHash(onManagement)).toBe("cebe0e7a");
    expect(orderHash(onEdge)).toBe("a50c7809");
  });

  it("derives the vhost, the prefix and the user of generation N", () => {
    expect(vhostName(onManagement)).toBe("workflow-cebe0e7a");
    expect(childPrefix(RABBITMQ_NAMING, onManagement)).toBe("workflow-cebe0e7a-vhost-");
    expect(userName(onManagement, 1)).toBe("workflow-cebe0e7a-v1");
    expect(userName(onEdge, 12)).toBe("workflow-a50c7809-v12");
  });

  it("names each child by its discriminator", () => {
    expect(vhostChildName(onManagement)).toBe("workflow-cebe0e7a-vhost-vhost");
    expect(passwordSecretName(onManagement, 1)).toBe("workflow-cebe0e7a-vhost-password-v1");
    expect(userChildName(onManagement, 2)).toBe("workflow-cebe0e7a-vhost-user-v2");
    expect(permissionChildName(onEdge, 3)).toBe("workflow-a50c7809-vhost-permission-v3");
  });

  it("refuses a generation that is not a positive integer", () => {
    expect(() => userName(onManagement, 0)).toThrow(RangeError);
    expect(() => childName(onManagement, { discriminator: "user", generation: 1.5 })).toThrow(RangeError);
  });

  it("names the delivered Secret and the backup path", () => {
    expect(deliveredSecretName(onManagement)).toBe("workflow-credentials");
    expect(backupPath(RABBITMQ_NAMING, onManagement, "openstack")).toBe(
      "openstack/rabbitmq/openstack/workflow-cebe0e7a-vhost/credentials",
    );
    expect(backupPath(RABBITMQ_NAMING, onEdge, "cp-ns")).toBe(
      "openstack/rabbitmq/cp-ns/workflow-a50c7809-vhost/credentials",
    );
  });
});

describe("parseChildName", () => {
  it("reads every child name back", () => {
    expect(parseChildName(onManagement, "workflow-cebe0e7a-vhost-vhost")).toEqual({ discriminator: "vhost" });
    for (const discriminator of ["password", "user", "permission"] as const) {
      const name = childName(onManagement, { discriminator, generation: 17 });
      expect(parseChildName(onManagement, name)).toEqual({ discriminator, generation: 17 });
    }
  });

  it("rejects other orders' names, unknown discriminators and non-canonical generations", () => {
    expect(parseChildName(onManagement, "workflow-a50c7809-vhost-user-v1")).toBeUndefined();
    expect(parseChildName(onManagement, "workflow-cebe0e7a-vhost-source")).toBeUndefined();
    expect(parseChildName(onManagement, "workflow-cebe0e7a-vhost-user-v0")).toBeUndefined();
    expect(parseChildName(onManagement, "workflow-cebe0e7a-vhost-user-v01")).toBeUndefined();
    expect(parseChildName(onManagement, "workflow-cebe0e7a-vhost-user-v")).toBeUndefined();
    expect(
      parseChildName(onManagement, "workflow-cebe0e7a-vhost-user-v99999999999999999999"),
    ).toBeUndefined();
  });
});

describe("labels", () => {
  it("puts three labels on a child, the cluster label empty on the management cluster", () => {
    expect(childLabels(RABBITMQ_NAMING, onManagement)).toEqual({
      "c5c3.io/rabbitmqvhost-name": "workflow",
      "c5c3.io/rabbitmqvhost-namespace": "tenant-a",
      "c5c3.io/rabbitmqvhost-cluster": "",
    });
    expect(childLabels(RABBITMQ_NAMING, onEdge)["c5c3.io/rabbitmqvhost-cluster"]).toBe("edge-1");
    expect(childSelector(RABBITMQ_NAMING, onManagement)).toBe(
      "c5c3.io/rabbitmqvhost-name=workflow,c5c3.io/rabbitmqvhost-namespace=tenant-a,c5c3.io/rabbitmqvhost-cluster=",
    );
  });

  it("marks password Secrets for the topology operator", () => {
    expect(passwordSecretLabels(onEdge)).toEqual({
      ...childLabels(RABBITMQ_NAMING, onEdge),
      "rabbitmq.com/topology-operator": "true",
    });
  });

  it("puts only the name and namespace labels on the delivered Secret", () => {
    expect(deliveredSecretLabels(RABBITMQ_NAMING, onEdge)).toEqual({
      "c5c3.io/rabbitmqvhost-name": "workflow",
      "c5c3.io/rabbitmqvhost-namespace": "tenant-a",
    });
  });
});

describe("isOwnChild", () => {
  const order = { ...onManagement, uid: "uid-1" };
  const name = userChildName(order, 1);
  const ownerRef = { apiVersion: "c5c3.io/v1alpha1", kind: "RabbitMQVhost", name: "workflow", uid: "uid-1" };

  it("accepts a prefixed child with the order's three labels", () => {
    expect(isOwnChild(RABBITMQ_NAMING, order, { name, labels: childLabels(RABBITMQ_NAMING, order) })).toBe(
      true,
    );
  });

  it("accepts a prefixed child with a controller reference to the order", () => {
    expect(
      isOwnChild(RABBITMQ_NAMING, order, { name, ownerReferences: [{ ...ownerRef, controller: true }] }),
    ).toBe(true);
  });

  it("refuses an object of a child's name without the labels or a controller reference", () => {
    expect(isOwnChild(RABBITMQ_NAMING, order, { name })).toBe(false);
    expect(isOwnChild(RABBITMQ_NAMING, order, { name, labels: childLabels(RABBITMQ_NAMING, onEdge) })).toBe(
      false,
    );
    expect(
      isOwnChild(RABBITMQ_NAMING, order, { name, labels: { "c5c3.io/rabbitmqvhost-name": "workflow" } }),
    ).toBe(false);
    expect(isOwnChild(RABBITMQ_NAMING, order, { name, ownerReferences: [ownerRef] })).toBe(false);
    expect(
      isOwnChild(RABBITMQ_NAMING, order, {
        name,
        ownerReferences: [{ ...ownerRef, controller: true, uid: "other" }],
      }),
    ).toBe(false);
  });

  it("refuses a labelled object without the order's prefix", () => {
    expect(
      isOwnChild(RABBITMQ_NAMING, order, {
        name: "workflow-credentials",
        labels: childLabels(RABBITMQ_NAMING, order),
      }),
    ).toBe(false);
  });
});
