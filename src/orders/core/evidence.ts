// The delivered Secret as evidence of which generation consumers hold: read from the order's cluster
// (a cached read: delivered Secrets are watched), it names the user it carries. A tenant can write that
// Secret, so its word is held against the operator's own records before it counts (vouched).
import { secretKind } from "../../api/index.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import { decode } from "./delivery.ts";
import type { DeliveredEvidence } from "./generations.ts";
import type { OrderKind } from "./kind.ts";
import { deliveredSecretName, isControllerRefTo, type OrderIdentity } from "./naming.ts";

const generationSuffix = /-v([1-9][0-9]*)$/;

/** What the delivered Secret claims, before it is held against the children. */
export type DeliveredClaim =
  | { readonly kind: "carries"; readonly generation: number; readonly password: string }
  | { readonly kind: "none" }
  | { readonly kind: "unknown" };

/**
 * Which of the order's generations its delivered Secret names, with the password it carries: "none"
 * without a Secret the order controls or with a user that is none of its own, "unknown" when the Secret
 * cannot be read.
 */
export async function deliveredClaim(
  home: Kube,
  kind: Pick<OrderKind, "naming" | "userName">,
  order: OrderIdentity,
): Promise<DeliveredClaim> {
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
  const data = secret["data"] as Record<string, string> | undefined;
  const generation = generationOfUser(kind, order, decode(data?.["username"]));
  return generation > 0
    ? { kind: "carries", generation, password: decode(data?.["password"]) }
    : { kind: "none" };
}

/**
 * The claim as evidence. It counts only where the generation it names has a password Secret holding the
 * same password: those live in the ControlPlane's namespace, where only the operator writes. A username
 * edited to another generation, or a copy of a generation since swept, re-applied by hand or by a GitOps
 * tool, is "unvouched": the status stands, nothing but the target's pieces is deleted on the pass, and
 * delivery writes the Secret again.
 */
export function vouched(
  claim: DeliveredClaim,
  passwordOf: (generation: number) => string,
): DeliveredEvidence {
  if (claim.kind !== "carries") return claim;
  const own = passwordOf(claim.generation);
  return own !== "" && own === claim.password
    ? { kind: "carries", generation: claim.generation }
    : { kind: "unvouched" };
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
