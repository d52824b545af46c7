// The backend's accounts a completed sweep removes: those of the order's naming scheme that no listed
// generation declares (an account child whose finalizer was stripped leaves a working user behind),
// never one the delivered Secret or the status still names.
import type { OrderDeps } from "./deps.ts";
import { apiErrorText } from "./errors.ts";
import { generationOfUser } from "./evidence.ts";
import type { DeliveredEvidence, GenerationPlan, RotationStatus } from "./generations.ts";
import { childrenOf } from "./generations/children.ts";
import type { Backend, GenerationListing, OrderKind } from "./kind.ts";
import type { OrderIdentity } from "./naming.ts";
import { need, type OrderPass } from "./pass/context.ts";

/** After a sweep (`plan.swept`), the strays on the backend the swept generation's children name. */
export async function sweptStrays<B extends Backend>(
  pass: OrderPass<B>,
  plan: GenerationPlan,
  listing: GenerationListing,
  delivered: DeliveredEvidence,
): Promise<void> {
  if (plan.swept === undefined) return;
  const { kind, deps, identity: order } = pass;
  // A swept generation whose account child was already gone (its finalizer stripped) left its account.
  const swept = childrenOf(listing.generations, plan.swept);
  const known = swept.account.phase === "absent" ? [kind.userName(order, plan.swept)] : [];
  const on = await need(pass.backends).named(swept.backend);
  if (on.kind === "open")
    await removeStrays(
      kind,
      deps,
      order,
      on.value,
      kind.resource(pass.order, order),
      listing,
      keptBy(delivered, plan.status),
      known,
    );
}

/**
 * The generations a stray removal must leave whatever the children say: the one the delivered Secret
 * carries and the live one of the status. A live User child lost (its finalizer stripped, an older
 * snapshot) leaves its broker user the only thing consumers log in with, until a successor is delivered.
 * Without the Secret's word, every account stays.
 */
function keptBy(delivered: DeliveredEvidence, status: RotationStatus): ReadonlySet<number> | "all" {
  if (delivered.kind === "unknown" || delivered.kind === "unvouched") return "all";
  const kept = new Set<number>();
  if (delivered.kind === "carries") kept.add(delivered.generation);
  if (status.passwordGeneration !== undefined) kept.add(status.passwordGeneration);
  return kept;
}

/**
 * Once per sweep: the backend's accounts of the order's naming scheme that no listed generation declares
 * (an account child whose finalizer was stripped leaves a working user behind) are removed, but never
 * one of `kept`. A failure is logged; the next sweep asks again.
 */
async function removeStrays<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  order: OrderIdentity,
  backend: B,
  resource: string,
  listing: GenerationListing,
  kept: ReadonlySet<number> | "all",
  known: readonly string[],
): Promise<void> {
  if (!kind.removeStrayAccounts || kept === "all") return;
  const declared = new Set(
    listing.generations.filter((c) => c.account.phase !== "absent").map((c) => c.generation),
  );
  const stray = (username: string) => {
    const generation = generationOfUser(kind, order, username);
    return generation > 0 && !declared.has(generation) && !kept.has(generation);
  };
  const log = { order: orderKeyOf(order) };
  try {
    const result = deps.strayAccounts
      ? await deps.strayAccounts(resource, stray, known)
      : await kind.removeStrayAccounts(
          deps.management,
          backend,
          resource,
          stray,
          deps.settings.brokerCheckTimeoutMs,
          orderKeyOf(order),
          known,
        );
    if (result.removed.length > 0)
      deps.log.warn({ ...log, removed: result.removed }, "removed accounts no child declares");
    if (result.failure) deps.log.warn(log, `removing stray accounts: ${result.failure}`);
  } catch (error) {
    deps.log.warn(log, `removing stray accounts failed: ${apiErrorText(error)}`);
  }
}

const orderKeyOf = (o: OrderIdentity) => ({ cluster: o.cluster, namespace: o.namespace, name: o.name });
