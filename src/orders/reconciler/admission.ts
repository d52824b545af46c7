// Consent: the order's ControlPlane and its namespace assignment, and the teardown finalizer that an
// assigned order carries.
import type * as k8s from "@kubernetes/client-node";
import {
  controlPlaneKind,
  ControlPlaneSchema,
  rabbitMQVhostKind,
  type RabbitMQVhost,
} from "../../api/index.ts";
import { admissionGate, controlPlaneKey, type ControlPlaneView, type GateResult } from "../gates.ts";
import { TEARDOWN_FINALIZER, type OrderKey } from "../naming.ts";
import { ReconcileError } from "./deps.ts";
import { apiErrorText, isStatus, mergeOptions, readCustom } from "./kube.ts";

/** The ControlPlane as the gates read it, or undefined when it does not exist. */
export async function readControlPlane(
  custom: k8s.CustomObjectsApi,
  order: OrderKey & { controlPlaneRef: { name: string; namespace?: string | undefined } },
): Promise<ControlPlaneView | undefined> {
  const key = controlPlaneKey(order);
  let raw: unknown;
  try {
    raw = await readCustom(custom, controlPlaneKind, key.namespace, key.name);
  } catch (error) {
    throw new ReconcileError(
      "transient",
      `reading ControlPlane ${key.namespace}/${key.name} failed: ${apiErrorText(error)}`,
    );
  }
  if (raw === undefined) return undefined;
  const parsed = ControlPlaneSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ReconcileError(
      "transient",
      `ControlPlane ${key.namespace}/${key.name} does not match its schema`,
    );
  }
  const spec = parsed.data.spec;
  return {
    namespace: key.namespace,
    name: key.name,
    namespaceAssignments: spec?.namespaceAssignments ?? [],
    messaging: spec?.infrastructure?.messaging,
    publishedMessagingEndpoint: spec?.infrastructure?.publishedMessagingEndpoint,
  };
}

export function admit(order: OrderKey, spec: RabbitMQVhost["spec"], cp: ControlPlaneView | undefined) {
  return admissionGate(
    { ...order, controlPlaneRef: spec.controlPlaneRef },
    cp,
  ) satisfies GateResult<ControlPlaneView>;
}

export function hasFinalizer(order: RabbitMQVhost): boolean {
  return (order.metadata.finalizers ?? []).includes(TEARDOWN_FINALIZER);
}

/**
 * Adds or removes the teardown finalizer with a merge patch that carries the resourceVersion it read, so
 * that a concurrent change to the list fails with a conflict (retried) instead of being overwritten.
 */
export async function setFinalizer(
  custom: k8s.CustomObjectsApi,
  order: RabbitMQVhost,
  present: boolean,
): Promise<void> {
  const others = (order.metadata.finalizers ?? []).filter((f) => f !== TEARDOWN_FINALIZER);
  const finalizers = present ? [...others, TEARDOWN_FINALIZER] : others;
  try {
    await custom.patchNamespacedCustomObject(
      {
        group: rabbitMQVhostKind.group,
        version: rabbitMQVhostKind.version,
        plural: rabbitMQVhostKind.plural,
        namespace: order.metadata.namespace ?? "",
        name: order.metadata.name ?? "",
        body: { metadata: { resourceVersion: order.metadata.resourceVersion, finalizers } },
      },
      mergeOptions,
    );
  } catch (error) {
    if (!present && isStatus(error, 404)) return; // already gone
    const what = present ? "adding" : "removing";
    throw new ReconcileError(
      "transient",
      `${what} the finalizer ${TEARDOWN_FINALIZER} failed: ${apiErrorText(error)}`,
    );
  }
}
