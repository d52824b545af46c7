// Where the order is after this pass: the backend of the generation the Secret carries, and a
// migration while anything of the order is on another backend (../migration.ts).
import { childrenOf } from "../generations/children.ts";
import type { Backend } from "../kind.ts";
import { migrationNote, placementOf } from "../migration.ts";
import { none } from "../requeue.ts";
import type { StepResult } from "../steps.ts";
import { need, type OrderPass } from "./context.ts";

export async function placement<B extends Backend>(pass: OrderPass<B>): Promise<StepResult> {
  const update = need(pass.update);
  const listing = need(pass.listing);
  const live = update.rotation?.state.passwordGeneration ?? 0;
  update.placement = placementOf({
    current: need(pass.backend).name,
    delivering: live > 0,
    delivered: live > 0 ? childrenOf(listing.generations, live).backend : undefined,
    held: [...need(pass.containers), ...listing.generations.map((c) => c.backend)],
  });
  const note = migrationNote(pass.kind.backendKind, update.placement.migration);
  if (note) update.resource = { ...update.resource, message: update.resource.message + note };
  return { wake: none };
}
