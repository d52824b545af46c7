// Delivery of the live generation: the endpoint, the backup confirmed in OpenBao, the foreign-Secret
// check, the server-side apply of the six keys beside the order, and a check that the applied password is
// the current one. Returns DeliveryReady for the pass; it never throws for a delivery-level failure.
import type * as k8s from "@kubernetes/client-node";
import { rabbitMQVhostKind } from "../../api/index.ts";
import { backUp, isStoreUnavailable, type CredentialStore } from "../../backup/store.ts";
import { messages, notOk, ok, Reason, REQUEUE, type ConditionState } from "../conditions.ts";
import type { Endpoint } from "../endpoint.ts";
import {
  deliveredSecretLabels,
  deliveredSecretName,
  isControllerRefTo,
  type OrderIdentity,
} from "../naming.ts";
import { DELIVERED_KEYS, deliveredData, type DeliveredData } from "../transport-url.ts";
import { apiErrorText, decode, encode, FIELD_MANAGER, applyOptions, readSecret } from "./kube.ts";

export interface DeliveryInput {
  order: OrderIdentity;
  endpoint: Endpoint;
  vhost: string;
  username: string;
  /** The live generation's password; "" when its Secret lost it. */
  password: string;
  backupPath: string;
}

export interface DeliveryOutcome {
  condition: ConditionState;
  /** Set once the Secret carries the live generation. */
  delivered?: { host: string; port: number; secretName: string } | undefined;
  requeueAfterMs?: number | undefined;
}

export async function deliver(
  core: k8s.CoreV1Api,
  store: CredentialStore,
  input: DeliveryInput,
): Promise<DeliveryOutcome> {
  const { order } = input;
  if (input.password === "") {
    return { condition: notOk(Reason.WaitingForPassword, messages.waitingForPassword()) };
  }
  const data = deliveredData({
    ...input.endpoint,
    vhost: input.vhost,
    username: input.username,
    password: input.password,
  });
  const secrets = [input.password, data.transport_url];
  try {
    const backup = await backUp(store, input.backupPath, data);
    if (!backup.synced) {
      const message = `${messages.backupNotSynced(input.backupPath)} (read-back: ${backup.reason})`;
      return { condition: notOk(Reason.BackupNotSynced, message), requeueAfterMs: REQUEUE.short };
    }
  } catch (error) {
    // BackupError messages are free of tokens and stored values (src/backup).
    const why = isStoreUnavailable(error) ? "the secret store cannot be used" : "the write failed";
    const detail = error instanceof Error ? error.message : String(error);
    const message = `${messages.backupNotSynced(input.backupPath)}; ${why}: ${detail}`;
    return { condition: notOk(Reason.BackupNotSynced, message), requeueAfterMs: REQUEUE.short };
  }

  const name = deliveredSecretName(order);
  const failed = (what: string, error: unknown): DeliveryOutcome => ({
    condition: notOk(Reason.DeliveryError, messages.deliveryError(what, apiErrorText(error, secrets))),
    requeueAfterMs: REQUEUE.short,
  });
  let existing: k8s.V1Secret | undefined;
  try {
    existing = await readSecret(core, order.namespace, name);
  } catch (error) {
    return failed(`reading Secret ${order.namespace}/${name}`, error);
  }
  if (existing && !(existing.metadata?.ownerReferences ?? []).some((r) => isControllerRefTo(order, r))) {
    // Nothing watched says when the foreign Secret goes, so the order looks again after a minute.
    return {
      condition: notOk(Reason.DeliveryRefused, messages.deliveryRefused(order.namespace, name)),
      requeueAfterMs: REQUEUE.unassigned,
    };
  }
  let applied = existing;
  if (!existing || !carries(existing, data, order)) {
    try {
      applied = await core.patchNamespacedSecret(
        {
          namespace: order.namespace,
          name,
          fieldManager: FIELD_MANAGER,
          force: true,
          body: deliveredSecret(order, data),
        },
        applyOptions,
      );
    } catch (error) {
      return failed(`applying Secret ${order.namespace}/${name}`, error);
    }
  }
  if (decode(applied?.data?.["password"]) !== input.password) {
    const message = messages.deliveryError(
      `applying Secret ${order.namespace}/${name}`,
      "the applied Secret does not carry the current password",
    );
    return { condition: notOk(Reason.DeliveryError, message), requeueAfterMs: REQUEUE.short };
  }
  return {
    condition: ok(Reason.Delivered, messages.delivered(name, order.namespace, order.cluster)),
    delivered: { host: input.endpoint.host, port: input.endpoint.port, secretName: name },
  };
}

/** The applied configuration: the six keys, the two labels, the controller reference to the order. */
export function deliveredSecret(order: OrderIdentity, data: DeliveredData): k8s.V1Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: deliveredSecretName(order),
      namespace: order.namespace,
      labels: deliveredSecretLabels(order),
      ownerReferences: [
        {
          apiVersion: rabbitMQVhostKind.apiVersion,
          kind: rabbitMQVhostKind.kind,
          name: order.name,
          uid: order.uid ?? "",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    type: "Opaque",
    data: Object.fromEntries(DELIVERED_KEYS.map((k) => [k, encode(data[k])])),
  };
}

/** True when the Secret already holds the six values, the labels and the controller reference. */
export function carries(secret: k8s.V1Secret, data: DeliveredData, order: OrderIdentity): boolean {
  const labels = secret.metadata?.labels ?? {};
  return (
    DELIVERED_KEYS.every((k) => decode(secret.data?.[k]) === data[k]) &&
    Object.entries(deliveredSecretLabels(order)).every(([k, v]) => labels[k] === v) &&
    (secret.metadata?.ownerReferences ?? []).some((r) => isControllerRefTo(order, r))
  );
}
