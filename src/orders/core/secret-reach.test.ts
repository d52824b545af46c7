import { describe, expect, it } from "vitest";
import { CoreReason } from "./conditions.ts";
import { secretReachGate } from "./gates.ts";

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
      requeue: { kind: "none" },
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
