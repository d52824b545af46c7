// Test vectors of the MariaDBDatabase names. The hashes were computed apart from the code, with
// `printf '%s' '<cluster>/<namespace>/<name>' | sha256sum | cut -c1-8` (or -32 for the long hash).
import { describe, expect, it } from "vitest";
import { backupPath, childLabels } from "../core/naming.ts";
import {
  databaseChildName,
  databaseName,
  defaultDatabaseName,
  legacyAccounts,
  grantChildName,
  MARIADB_NAMING,
  MAX_USER_NAME,
  passwordSecretName,
  provisionedDatabase,
  sqlClaim,
  userChildName,
  userName,
  userNamePrefix,
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

  it("name the account of a name of at most 53 characters <name>-<8 hex>-v<N>, the name whole", () => {
    expect(userName(cell0, 1)).toBe("nova-cell0-13e1aacc-v1");
    expect(userName(edge, 12)).toBe("keystone-f0ab45b6-v12");
    const fits = { ...longest, name: "a".repeat(53) };
    expect(userName(fits, 1)).toBe(`${"a".repeat(53)}-ed502fa6-v1`);
    expect(userName(fits, Number.MAX_SAFE_INTEGER)).toHaveLength(MAX_USER_NAME);
    expect(() => userName(cell0, 0)).toThrow(RangeError);
  });

  it("name the account of a longer name <first 29 characters>-<32 hex>-v<N>, never a cut name and 8 hex", () => {
    expect(userName(longest, 1)).toBe(`${"a".repeat(29)}-693065b59ae9d2b48d90cb7caaaad7b1-v1`);
    const just = { ...longest, name: "a".repeat(54) };
    expect(userName(just, 3)).toBe(`${"a".repeat(29)}-ca190a3ea44538893526ec5a162e2bf5-v3`);
    expect(userName(longest, Number.MAX_SAFE_INTEGER)).toHaveLength(MAX_USER_NAME);
    // Two long names alike in their first 53 characters: the old scheme's collision search varied the
    // tail; the 128-bit hash covers the whole name.
    const twin = { ...longest, name: `${"a".repeat(53)}bbbbbbbbbb` };
    expect(userNamePrefix(twin)).not.toBe(userNamePrefix(longest));
    expect(userNamePrefix(twin).slice(0, 30)).toBe(userNamePrefix(longest).slice(0, 30));
  });

  it("keep the account prefix the start of every account, and no other order's account", () => {
    for (const order of [cell0, edge, longest]) {
      expect(userName(order, 7).startsWith(userNamePrefix(order))).toBe(true);
    }
    // A short name that is a long one's stem: neither scheme's prefix starts the other's accounts.
    const stem = { ...longest, name: "a".repeat(29) };
    expect(userName(longest, 1).startsWith(userNamePrefix(stem))).toBe(false);
    expect(userName(stem, 1).startsWith(userNamePrefix(longest))).toBe(false);
  });

  it("keep the scheme before issue 31 only for a long name whose Users already hold it", () => {
    const old = `${"a".repeat(53)}-693065b5-v`;
    expect(userNamePrefix(longest, true)).toBe(old);
    expect(userName(longest, 2, true)).toBe(`${old}2`);
    expect(legacyAccounts(longest, [`${old}1`])).toBe(true);
    expect(legacyAccounts(longest, [userName(longest, 1)])).toBe(false);
    expect(legacyAccounts(longest, [])).toBe(false);
    // A name of at most 53 characters has one scheme.
    expect(userName(cell0, 1, true)).toBe(userName(cell0, 1));
    expect(legacyAccounts(cell0, [userName(cell0, 1)])).toBe(false);
  });

  it("name the default database <name, '-' as '_', at most 31>_<32 hex>, within 64 characters", () => {
    expect(defaultDatabaseName(cell0)).toBe("nova_cell0_13e1aacc3707fb54028632306ea7e355");
    expect(defaultDatabaseName(edge)).toBe("keystone_f0ab45b6a98b219abd1221a03e24b266");
    expect(defaultDatabaseName(longest)).toBe(`${"a".repeat(31)}_693065b59ae9d2b48d90cb7caaaad7b1`);
    expect(defaultDatabaseName(longest)).toHaveLength(64);
    // The same name in another namespace or cluster gets another schema.
    expect(defaultDatabaseName({ ...cell0, namespace: "tenant-b" })).not.toBe(defaultDatabaseName(cell0));
    expect(defaultDatabaseName({ ...cell0, cluster: "edge-1" })).not.toBe(defaultDatabaseName(cell0));
  });

  it("name the database spec.databaseName, else the one the status names, else the default", () => {
    expect(databaseName(cell0)).toBe(defaultDatabaseName(cell0));
    expect(databaseName({ ...cell0, databaseName: "nova_api" })).toBe("nova_api");
    expect(databaseName({ ...cell0, provisioned: "nova_cell0" })).toBe("nova_cell0");
    expect(databaseName({ ...cell0, databaseName: "nova_api", provisioned: "nova_cell0" })).toBe("nova_api");
  });

  it("take from the status only a name an order could have been given", () => {
    expect(provisionedDatabase("nova_cell0")).toBe("nova_cell0");
    for (const value of ["mysql", "Information_Schema", "sys", "vhost_broker", "a-b", "", 3, undefined]) {
      expect(provisionedDatabase(value)).toBeUndefined();
    }
  });

  it("claim the order's SQL objects as MariaDBDatabase <cluster>/<namespace>/<name>", () => {
    expect(sqlClaim(cell0)).toBe("MariaDBDatabase /tenant-a/nova-cell0");
    expect(sqlClaim(edge)).toBe("MariaDBDatabase edge-1/tenant-b/keystone");
  });

  it("back up at openstack/mariadb/<ControlPlane namespace>/<prefix>/credentials", () => {
    expect(backupPath(MARIADB_NAMING, cell0, "openstack")).toBe(
      "openstack/mariadb/openstack/nova-cell0-13e1aacc-db/credentials",
    );
  });

  it("label every child c5c3.io/mariadbdatabase-{name,namespace,cluster}", () => {
    expect(childLabels(MARIADB_NAMING, edge)).toEqual({
      "c5c3.io/mariadbdatabase-name": "keystone",
      "c5c3.io/mariadbdatabase-namespace": "tenant-b",
      "c5c3.io/mariadbdatabase-cluster": "edge-1",
    });
  });
});
