// The verification of an applied object: answered from its broker's listing of the period (one
// listing per broker and period, not a GET per object). What the listing shows as different or missing
// is read back on its own before anything is declared again: the listing may be most of a period old,
// and its pages do not hold still while it is read.
import type { ManagementClient, ReadBack } from "../broker/index.ts";
import type { ListedCheck } from "../broker/listed-compare.ts";
import type { ControllerDeps } from "./deps.ts";

export interface Verification extends ReadBack {
  /** When the listing that confirmed the state started (monotonic); absent when it was read on its own. */
  listedAt?: number;
}

export async function verifyOnBroker<S>(
  kind: { listed?: ListedCheck<S>; readBack(client: ManagementClient, spec: S): Promise<ReadBack> },
  deps: Pick<ControllerDeps, "clock" | "settings" | "state">,
  client: ManagementClient,
  spec: S,
): Promise<Verification> {
  if (kind.listed) {
    const { listing, startedAt } = await deps.state.listings.read(
      client,
      kind.listed.resources,
      deps.clock.monotonic(),
      deps.settings.verificationPeriodMs,
      // A listing from before the broker was found emptied shows what it lost as there.
      deps.state.applied.lostAt(client.endpoint),
    );
    const listed = kind.listed.compare(listing, spec);
    if (listed.matches) return { ...listed, listedAt: startedAt };
  }
  return kind.readBack(client, spec);
}
