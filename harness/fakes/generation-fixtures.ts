// Test-only builders for the generation tests (not imported by production code).
import type {
  ChildState,
  GenerationChildren,
  GenerationInput,
  PasswordState,
  RotationSpec,
} from "../../src/orders/core/generations/types.ts";
import { viewWords } from "../../src/orders/rabbitmq/conditions.ts";

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const T0 = new Date("2030-01-01T00:00:00Z");

/** The fake clock: T0 plus the given seconds. */
export function at(seconds: number): Date {
  return new Date(T0.getTime() + seconds * SECOND);
}

/** "absent" | "pending" | "ready" | "deleting" | "refused:<message>" */
export function child(state: string): ChildState {
  if (state.startsWith("refused:")) return { phase: "refused", message: state.slice("refused:".length) };
  if (state === "absent" || state === "pending" || state === "ready" || state === "deleting")
    return { phase: state };
  throw new Error(`unknown child state ${state}`);
}

export function gen(
  generation: number,
  password: PasswordState = "present",
  account = "ready",
  access = "ready",
): GenerationChildren {
  return { generation, password, account: child(account), access: child(access) };
}

export const VHOST = "workflow-cebe0e7a";
export const userName = (n: number) => `${VHOST}-v${n}`;

export const SPEC: RotationSpec = { declaredGeneration: 1, intervalMs: 3 * MINUTE, gracePeriodMs: MINUTE };

export function input(
  over: Partial<Omit<GenerationInput, "spec">> & { spec?: Partial<RotationSpec> } = {},
): GenerationInput {
  return {
    status: over.status ?? {},
    children: over.children ?? [],
    resource: VHOST,
    userName,
    words: viewWords,
    spec: { ...SPEC, ...over.spec },
    delivered: over.delivered,
    sweepHold: over.sweepHold,
    backend: over.backend,
    queuedAt: over.queuedAt,
  };
}
