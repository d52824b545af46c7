// The delivered Secret as evidence of which generation consumers hold: read from the order's cluster
// (a cached read: delivered Secrets are watched), it names the user it carries.
import { secretKind } from "../../api/index.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import { decode } from "./delivery.ts";
import type { DeliveredEvidence } from "./generations.ts";
import type { OrderKind } from "./kind.ts";
import { deliveredSecretName, isControllerRefTo, type OrderIdentity } from "./naming.ts";

const generationSuffix = /-v([1-9][0-9]*)$/;

/**
 * Which of the order's generations its delivered Secret carries: "none" without a Secret the order
 * controls or with a user that is none of its own, "unknown" when the Secret cannot be read.
 */
export async function deliveredEvidence(
  home: Kube,
  kind: Pick<OrderKind, "naming" | "userName">,
  order: OrderIdentity,
): Promise<DeliveredEvidence> {
  let secret;
  try {
    secret = await home.get(secretKind, { namespace: order.namespace, name: deliveredSecretName(order) });
  } catch {
    return { kind: "unknown" };
  }
  const ours = (secret?.metadata?.ownerReferences ?? []).some((r) =>
    isControllerRefTo(kind.naming, order, r),
  );
  if (!secret || !ours) return { kind: "none" };
  const username = decode((secret["data"] as Record<string, string> | undefined)?.["username"]);
  const generation = generationOfUser(kind, order, username);
  return generation > 0 ? { kind: "carries", generation } : { kind: "none" };
}

/** The generation whose account `username` is, by the order's naming scheme; 0 when it is none of them. */
export function generationOfUser(
  kind: Pick<OrderKind, "userName">,
  order: OrderIdentity,
  username: string,
): number {
  const match = generationSuffix.exec(username);
  const generation = match ? Number(match[1]) : 0;
  return Number.isSafeInteger(generation) && generation > 0 && kind.userName(order, generation) === username
    ? generation
    : 0;
}
