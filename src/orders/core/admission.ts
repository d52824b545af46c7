// Consent: the order's ControlPlane and its namespace assignment.
import { controlPlaneKind, ControlPlaneSchema } from "../../api/index.ts";
import { TransientError } from "../../runtime/base/errors.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import { apiErrorText } from "./errors.ts";
import { admissionGate, controlPlaneKey, type ControlPlaneView, type GateResult } from "./gates.ts";
import type { OrderSpec } from "./kind.ts";
import type { OrderKey } from "./naming.ts";

/** The ControlPlane as the gates read it, or undefined when it does not exist. */
export async function readControlPlane(
  kube: Kube,
  order: OrderKey & { controlPlaneRef: { name: string; namespace?: string | undefined } },
): Promise<ControlPlaneView | undefined> {
  const key = controlPlaneKey(order);
  let raw: unknown;
  try {
    raw = await kube.get(controlPlaneKind, key);
  } catch (error) {
    throw new TransientError(
      `reading ControlPlane ${key.namespace}/${key.name} failed: ${apiErrorText(error)}`,
      {
        cause: error,
      },
    );
  }
  if (raw === undefined) return undefined;
  // Its status is its own controller's, and nothing here reads it: a value there cannot stall an order.
  const parsed = ControlPlaneSchema.safeParse({ ...(raw as object), status: undefined });
  if (!parsed.success) {
    throw new TransientError(`ControlPlane ${key.namespace}/${key.name} does not match its schema`);
  }
  const spec = parsed.data.spec;
  return {
    namespace: key.namespace,
    name: key.name,
    namespaceAssignments: spec?.namespaceAssignments ?? [],
    messaging: spec?.infrastructure?.messaging,
    publishedMessagingEndpoint: spec?.infrastructure?.publishedMessagingEndpoint,
    database: spec?.infrastructure?.database,
    publishedDatabaseEndpoint: spec?.infrastructure?.publishedDatabaseEndpoint,
  };
}

export function admit(order: OrderKey, spec: OrderSpec, cp: ControlPlaneView | undefined) {
  return admissionGate(
    { ...order, controlPlaneRef: spec.controlPlaneRef },
    cp,
  ) satisfies GateResult<ControlPlaneView>;
}
