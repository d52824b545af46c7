import { describe, expect, it } from "vitest";
import { CoreReason } from "./conditions.ts";
import { secretReachGate, teardownReachGate } from "./gates.ts";

const cp = { namespace: "openstack", name: "cp" };
const onManagement = { cluster: "", namespace: "tenant-a", name: "o" };
const onTarget = { cluster: "edge", namespace: "tenant-b", name: "o" };

describe("secretReachGate", () => {
  it("is open when Secrets are not limited", () => {
    expect(secretReachGate(undefined, onManagement, cp).open).toBe(true);
    expect(secretReachGate([], onManagement, cp).open).toBe(true);
  });

  it("is open when the ControlPlane's namespace and a management order's own are listed", () => {
    expect(secretReachGate(["openstack", "tenant-a"], onManagement, cp).open).toBe(true);
    // On a target cluster the delivered Secret is that cluster's: only the ControlPlane's counts here.
    expect(secretReachGate(["openstack"], onTarget, cp).open).toBe(true);
  });

  it("names each namespace out of reach, freezes the order and waits for a new list", () => {
    const gate = secretReachGate(["openstack"], onManagement, cp);
    if (gate.open) throw new Error("open");
    expect(gate.gate).toMatchObject({
      reason: CoreReason.SecretsOutOfReach,
      wake: { kind: "none" },
      scope: "both",
      frozen: true,
    });
    expect(gate.gate.message).toContain('namespace "tenant-a"');
    expect(gate.gate.message).toContain("rbac.secretNamespaces");
    expect(gate.gate.message).not.toContain('openstack"');
    const both = secretReachGate(["elsewhere"], onManagement, cp);
    if (both.open) throw new Error("open");
    expect(both.gate.message).toMatch(/namespace "openstack" and namespace "tenant-a"/);
    const target = secretReachGate(["tenant-b"], onTarget, cp);
    if (target.open) throw new Error("open");
    expect(target.gate.message).toMatch(/namespace "openstack" of the management cluster/);
  });
});

describe("teardownReachGate", () => {
  const leftovers = { finalizer: "c5c3.io/rabbitmqvhost-teardown", selector: "c5c3.io/rabbitmqvhost-name=o" };

  it("lets the whole teardown run when Secrets are not limited, or both namespaces are listed", () => {
    expect(teardownReachGate(undefined, onManagement, "openstack", leftovers)).toEqual({
      open: true,
      value: { deliveredSecret: true },
    });
    expect(teardownReachGate(["openstack", "tenant-a"], onManagement, "openstack", leftovers)).toEqual({
      open: true,
      value: { deliveredSecret: true },
    });
  });

  it("leaves the delivered Secret to the garbage collector without the order's own namespace", () => {
    expect(teardownReachGate(["openstack"], onManagement, "openstack", leftovers)).toEqual({
      open: true,
      value: { deliveredSecret: false },
    });
    // On a target cluster the delivered Secret is that cluster's, never limited.
    expect(teardownReachGate(["openstack"], onTarget, "openstack", leftovers)).toEqual({
      open: true,
      value: { deliveredSecret: true },
    });
  });

  it("holds everything without the ControlPlane's namespace, saying what removing the finalizer leaves", () => {
    const gate = teardownReachGate(["tenant-a"], onManagement, "openstack", leftovers);
    if (gate.open) throw new Error("open");
    expect(gate.gate.reason).toBe(CoreReason.SecretsOutOfReach);
    expect(gate.gate.message).toContain('namespace "openstack"');
    expect(gate.gate.message).toContain("rbac.secretNamespaces");
    expect(gate.gate.message).toContain("deletes nothing");
    expect(gate.gate.message).toContain(leftovers.finalizer);
    expect(gate.gate.message).toContain(leftovers.selector);
  });
});
