// Delivery of the live generation: the backup confirmed in OpenBao, the foreign-Secret check, the
// server-side apply of the kind's keys beside the order, and a check that the applied password is the
// current one. Returns DeliveryReady for the pass and when to look again; it never throws for a
// delivery-level failure.
import { secretKind } from "../../api/index.ts";
import { ownerMetadata } from "../../backup/owner.ts";
import { backUp, isStoreUnavailable, type CredentialStore } from "../../backup/store.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import { CoreReason as Reason, coreMessages as messages, notOk, ok, REQUEUE } from "./conditions.ts";
import type { ConditionState } from "./types.ts";
import { apiErrorText } from "./errors.ts";
import {
  controllerReference,
  deliveredSecretLabels,
  deliveredSecretName,
  isControllerRefTo,
  type NamingScheme,
  type OrderIdentity,
} from "./naming.ts";
import { after, none, type Wake } from "./requeue.ts";

export interface DeliveryInput {
  order: OrderIdentity;
  /** The delivered keys and their values; `password` among them. */
  data: Record<string, string>;
  /** Values that must never reach a condition (the password, a URL that carries it). */
  secrets: string[];
  backupPath: string;
  /** The password generation the keys belong to, for the backup's custom_metadata. */
  generation: number;
  /** The DeliveryReady message once delivered. */
  delivered: string;
}

export interface DeliveryOutcome {
  condition: ConditionState;
  /** Set once the Secret carries the live generation. */
  delivered?: { secretName: string } | undefined;
  /** Set when the Secret was marked immutable and had to be replaced to carry it. */
  replacedImmutable?: boolean | undefined;
  wake: Wake;
}

export async function deliver(
  home: Kube,
  store: CredentialStore,
  naming: NamingScheme,
  input: DeliveryInput,
): Promise<DeliveryOutcome> {
  const { order, data } = input;
  const password = data["password"] ?? "";
  if (password === "") {
    return { condition: notOk(Reason.WaitingForPassword, messages.waitingForPassword()), wake: none };
  }
  const retry = after(REQUEUE.short, "waiting");
  try {
    const owner = ownerMetadata({ ...order, kind: naming.kind, generation: input.generation });
    const backup = await backUp(store, input.backupPath, data, owner);
    if (!backup.synced) {
      const message = `${messages.backupNotSynced(input.backupPath)} (read-back: ${backup.reason})`;
      return { condition: notOk(Reason.BackupNotSynced, message), wake: retry };
    }
  } catch (error) {
    // BackupError messages are free of tokens and stored values (src/backup).
    const why = isStoreUnavailable(error) ? "the secret store cannot be used" : "the write failed";
    const detail = error instanceof Error ? error.message : String(error);
    const message = `${messages.backupNotSynced(input.backupPath)}; ${why}: ${detail}`;
    return { condition: notOk(Reason.BackupNotSynced, message), wake: retry };
  }

  const name = deliveredSecretName(order);
  const failed = (what: string, error: unknown): DeliveryOutcome => ({
    condition: notOk(Reason.DeliveryError, messages.deliveryError(what, apiErrorText(error, input.secrets))),
    wake: retry,
  });
  let existing: KubeObject | undefined;
  try {
    existing = await home.get(secretKind, { namespace: order.namespace, name });
  } catch (error) {
    return failed(`reading Secret ${order.namespace}/${name}`, error);
  }
  if (
    existing &&
    !(existing.metadata?.ownerReferences ?? []).some((r) => isControllerRefTo(naming, order, r))
  ) {
    // Nothing watched says when the foreign Secret goes, so the order looks again after a minute.
    return {
      condition: notOk(Reason.DeliveryRefused, messages.deliveryRefused(order.namespace, name)),
      wake: after(REQUEUE.unassigned, "gate"),
    };
  }
  let applied = existing;
  let replacedImmutable = false;
  if (existing && existing["immutable"] === true && !carries(naming, existing, data, order)) {
    // An immutable Secret takes no update (a tenant set the flag): it is deleted and made again, as
    // Kubernetes asks, with a create that fails rather than adopt a Secret someone made in between.
    try {
      await home.delete(secretKind, { namespace: order.namespace, name });
      applied = await home.create(secretKind, deliveredSecret(naming, order, data));
      replacedImmutable = true;
    } catch (error) {
      return failed(`replacing Secret ${order.namespace}/${name}, which is marked immutable,`, error);
    }
  } else if (!existing || !carries(naming, existing, data, order)) {
    try {
      applied = await home.apply(secretKind, deliveredSecret(naming, order, data));
    } catch (error) {
      return failed(`applying Secret ${order.namespace}/${name}`, error);
    }
  }
  if (decode((applied?.["data"] as Record<string, string> | undefined)?.["password"]) !== password) {
    const message = messages.deliveryError(
      `applying Secret ${order.namespace}/${name}`,
      "the applied Secret does not carry the current password",
    );
    return { condition: notOk(Reason.DeliveryError, message), wake: retry };
  }
  return {
    condition: ok(Reason.Delivered, input.delivered),
    delivered: { secretName: name },
    replacedImmutable,
    wake: none,
  };
}

/** The applied configuration: the keys, the two labels, the controller reference to the order. */
export function deliveredSecret(
  naming: NamingScheme,
  order: OrderIdentity,
  data: Record<string, string>,
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: deliveredSecretName(order),
      namespace: order.namespace,
      labels: deliveredSecretLabels(naming, order),
      ownerReferences: [controllerReference(naming, order)],
    },
    type: "Opaque",
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, encode(v)])),
  };
}

/** True when the Secret already holds the values, the labels and the controller reference. */
export function carries(
  naming: NamingScheme,
  secret: KubeObject,
  data: Record<string, string>,
  order: OrderIdentity,
): boolean {
  const labels = secret.metadata?.labels ?? {};
  const stored = (secret["data"] ?? {}) as Record<string, string>;
  return (
    Object.entries(data).every(([k, v]) => decode(stored[k]) === v) &&
    Object.entries(deliveredSecretLabels(naming, order)).every(([k, v]) => labels[k] === v) &&
    (secret.metadata?.ownerReferences ?? []).some((r) => isControllerRefTo(naming, order, r))
  );
}

export const decode = (value: string | undefined): string =>
  value === undefined ? "" : Buffer.from(value, "base64").toString("utf8");
export const encode = (value: string): string => Buffer.from(value, "utf8").toString("base64");
