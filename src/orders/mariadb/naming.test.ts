// Test vectors of the MariaDBDatabase names. The hashes were computed apart from the code, with
// `printf '%s' '<cluster>/<namespace>/<name>' | sha256sum | cut -c1-8`.
import { describe, expect, it } from "vitest";
import {
  backupPath,
  childLabels,
  databaseChildName,
  databaseName,
  grantChildName,
  MAX_USER_NAME,
  passwordSecretName,
  userChildName,
  userName,
} from "./naming.ts";

const cell0 = { cluster: "", namespace: "tenant-a", name: "nova-cell0" };
const edge = { cluster: "edge-1", namespace: "tenant-b", name: "keystone" };
const longest = { cluster: "", namespace: "tenant-a", name: "a".repeat(63) };

describe("MariaDBDatabase names", () => {
  it("name the children <name>-<8 hex>-db-<discriminator> in the ControlPlane's namespace", () => {
    expect(databaseChildName(cell0)).toBe("nova-cell0-13e1aacc-db-database");
    expect(passwordSecretName(cell0, 2)).toBe("nova-cell0-13e1aacc-db-password-v2");
    expect(userChildName(cell0, 2)).toBe("nova-cell0-13e1aacc-db-user-v2");
    expect(grantChildName(cell0, 2)).toBe("nova-cell0-13e1aacc-db-grant-v2");
    expect(databaseChildName(edge)).toBe("keystone-f0ab45b6-db-database");
  });

  it("name the account of generation N <name>-<8 hex>-v<N>, within 80 characters", () => {
    expect(userName(cell0, 1)).toBe("nova-cell0-13e1aacc-v1");
    expect(userName(edge, 12)).toBe("keystone-f0ab45b6-v12");
    expect(userName(longest, 1)).toBe(`${"a".repeat(53)}-693065b5-v1`);
    expect(userName(longest, Number.MAX_SAFE_INTEGER)).toHaveLength(MAX_USER_NAME);
    expect(() => userName(cell0, 0)).toThrow(RangeError);
  });

  it("name the database spec.databaseName, else metadata.name with '-' turned into '_'", () => {
    expect(databaseName(cell0)).toBe("nova_cell0");
    expect(databaseName({ name: "a-b-c", databaseName: "nova_api" })).toBe("nova_api");
    expect(databaseName(longest)).toHaveLength(63);
  });

  it("back up at openstack/mariadb/<ControlPlane namespace>/<prefix>/credentials", () => {
    expect(backupPath(cell0, "openstack")).toBe(
      "openstack/mariadb/openstack/nova-cell0-13e1aacc-db/credentials",
    );
  });

  it("label every child c5c3.io/mariadbdatabase-{name,namespace,cluster}", () => {
    expect(childLabels(edge)).toEqual({
      "c5c3.io/mariadbdatabase-name": "keystone",
      "c5c3.io/mariadbdatabase-namespace": "tenant-b",
      "c5c3.io/mariadbdatabase-cluster": "edge-1",
    });
  });
});
