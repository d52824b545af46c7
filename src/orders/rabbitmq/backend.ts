// The managed bus: the ControlPlane's RabbitmqCluster and its default-user Secret, read on the
// management cluster through the port (from the caches where they hold them) and judged by the bus gate.
// The admin password is read only to check that it is there.
import { rabbitmqClusterKind, RabbitmqClusterSchema, secretKind } from "../../api/index.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import { apiErrorText } from "../core/errors.ts";
import type { ControlPlaneView, GateResult } from "../core/gates.ts";
import type { NamespacedName } from "../core/gates.ts";
import {
  busGate,
  busReadError,
  defaultUserSecretKey,
  messagingGate,
  type ManagedBus,
} from "./backend-gates.ts";

export async function managedBus(kube: Kube, cp: ControlPlaneView): Promise<GateResult<ManagedBus>> {
  const declared = messagingGate(cp);
  if (!declared.open) return declared;
  return busNamed(kube, declared.value);
}

/**
 * The RabbitmqCluster `rmq` as a bus, whether or not a ControlPlane names it now (a migration's old
 * broker); judged by the same gate.
 */
export async function busNamed(kube: Kube, rmq: NamespacedName): Promise<GateResult<ManagedBus>> {
  let raw: unknown;
  try {
    raw = await kube.get(rabbitmqClusterKind, rmq);
  } catch (error) {
    return {
      open: false,
      gate: busReadError(`RabbitmqCluster ${rmq.namespace}/${rmq.name}`, apiErrorText(error)),
    };
  }
  const parsed = raw === undefined ? undefined : RabbitmqClusterSchema.safeParse(raw);
  if (parsed && !parsed.success) {
    const gate = busReadError(`RabbitmqCluster ${rmq.namespace}/${rmq.name}`, "it does not match its schema");
    return { open: false, gate };
  }
  const view = parsed?.data;
  const secretKey = view ? defaultUserSecretKey(rmq, view) : undefined;
  let secret: KubeObject | undefined;
  if (secretKey) {
    try {
      secret = await kube.get(secretKind, secretKey);
    } catch (error) {
      const what = `the default-user Secret ${secretKey.namespace}/${secretKey.name}`;
      return { open: false, gate: busReadError(what, apiErrorText(error)) };
    }
  }
  return busGate({
    rabbitmqCluster: rmq,
    view,
    defaultUserSecret: secret ? { data: secret["data"] as Record<string, string> | undefined } : undefined,
  });
}
