// The managed bus: the ControlPlane's RabbitmqCluster and its default-user Secret, read on the
// management cluster and judged by the gates. The admin password is read only to check that it is there.
import type * as k8s from "@kubernetes/client-node";
import { rabbitmqClusterKind, RabbitmqClusterSchema } from "../../api/index.ts";
import {
  busGate,
  busReadError,
  defaultUserSecretKey,
  messagingGate,
  type ControlPlaneView,
  type GateResult,
  type ManagedBus,
} from "../gates.ts";
import { apiErrorText, readCustom, readSecret } from "./kube.ts";

export async function managedBus(
  clients: { custom: k8s.CustomObjectsApi; core: k8s.CoreV1Api },
  cp: ControlPlaneView,
): Promise<GateResult<ManagedBus>> {
  const declared = messagingGate(cp);
  if (!declared.open) return declared;
  const rmq = declared.value;
  let raw: unknown;
  try {
    raw = await readCustom(clients.custom, rabbitmqClusterKind, rmq.namespace, rmq.name);
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
  let secret: k8s.V1Secret | undefined;
  if (secretKey) {
    try {
      secret = await readSecret(clients.core, secretKey.namespace, secretKey.name);
    } catch (error) {
      const what = `the default-user Secret ${secretKey.namespace}/${secretKey.name}`;
      return { open: false, gate: busReadError(what, apiErrorText(error)) };
    }
  }
  return busGate({ rabbitmqCluster: rmq, view, defaultUserSecret: secret });
}
