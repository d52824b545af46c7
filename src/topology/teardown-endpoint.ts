// The broker of a deleted object, when its reference cannot be used. Whether the object may hold
// something on the broker decides: one no pass ever declared (no observedGeneration, never Ready) holds
// nothing there, so its finalizer goes without a broker call, and nothing the object did not declare
// is deleted (a queue of the same name someone else declared). One that was declared is deleted on the
// broker, also through a connection Secret that has lost its label (the label keeps Secrets out of the
// operator's cache; it grants nothing), and otherwise keeps its finalizer until the reference is usable.
import type { BrokerResolution } from "../rabbitmq/resolve-broker.ts";

interface ObservedStatus {
  observedGeneration?: unknown;
  conditions?: { type?: unknown; status?: unknown }[];
}

/**
 * Whether a pass (this controller's or upstream's) brought the object to the broker: its status says
 * so on every success, observedGeneration and Ready True, and keeps observedGeneration after.
 */
export function everDeclared(status: unknown): boolean {
  if (typeof status !== "object" || status === null) return false;
  const { observedGeneration, conditions } = status as ObservedStatus;
  if (typeof observedGeneration === "number") return true;
  return Array.isArray(conditions) && conditions.some((c) => c.type === "Ready" && c.status === "True");
}

/** A deleted object's resolution, as the teardown takes it: one never declared is gone from the broker. */
export function teardownResolution(resolution: BrokerResolution, declared: boolean): BrokerResolution {
  if (declared || resolution.outcome === "ready" || resolution.outcome === "gone") return resolution;
  return { outcome: "gone", reason: `${resolution.reason}; no pass ever declared it on the broker` };
}
