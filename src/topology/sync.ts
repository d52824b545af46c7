// Declare or verify, the topology kinds' sync: what the broker does not hold yet is declared; what it
// should hold is verified, from its broker's listing of the period (one listing per broker and period,
// not a GET per object, src/external/snapshot.ts). What the listing shows as different or missing is
// read back on its own before anything is declared again: the listing may be most of a period old, and
// its pages do not hold still while it is read.
import { verifyBySnapshot, type ReadyDesired, type Recall, type Synced } from "../external/index.ts";
import { deleteGuestUser, type ManagementClient, type ReadBack } from "./broker/index.ts";
import type { BrokerListing } from "./broker/listing.ts";
import type { Broker, TopologyKind, TopologyObject } from "./backend.ts";
import type { ControllerDeps } from "./deps.ts";

export interface Verification extends ReadBack {
  /** When the listing that confirmed the state started (monotonic); absent when it was read on its own. */
  listedAt?: number;
}

export async function verifyOnBroker<S>(
  kind: Pick<TopologyKind<never, S>, "listed" | "readBack">,
  deps: Pick<ControllerDeps, "clock" | "settings" | "state">,
  client: ManagementClient,
  spec: S,
): Promise<Verification> {
  const listed = kind.listed;
  if (listed) {
    const check = {
      parts: listed.resources,
      compare: (listing: BrokerListing, s: S) => listed.compare(listing, s),
    };
    const { answer, startedAt } = await verifyBySnapshot(deps.state.listings, client, check, spec, {
      now: deps.clock.monotonic(),
      periodMs: deps.settings.verificationPeriodMs,
      // A listing from before the broker was found emptied shows what it lost as there.
      since: deps.state.applied.lostAt(client.endpoint),
    });
    if (answer.matches) return { ...answer, listedAt: startedAt };
  }
  return kind.readBack(client, spec);
}

/**
 * Declares what the broker does not hold yet, or verifies what it should hold: a state applied by this
 * process is read back and declared again on drift; a Ready object this process has no memo of (after a
 * restart) is read back before anything is declared, so a broker that holds it already costs a read,
 * not a write.
 */
export async function declareOrVerify<O extends TopologyObject, S>(
  kind: TopologyKind<O, S>,
  deps: ControllerDeps,
  broker: Broker,
  object: O,
  desired: ReadyDesired<S, Broker>,
  recall: Recall,
): Promise<Synced> {
  const { client } = broker;
  const log = { kind: kind.kind.kind, namespace: object.metadata.namespace, name: object.metadata.name };
  deps.state.brokers.reached(deps, client);
  await deleteGuestWhenDue(deps, client, broker.key, deps.clock.monotonic());
  const restarted = !recall.known && !desired.supersedes && recall.readyAtGeneration;
  const check =
    recall.known || restarted ? await verifyOnBroker(kind, deps, client, desired.spec) : undefined;
  if (recall.known && check && !check.matches) {
    deps.logger.info(
      { ...log, exists: check.exists, differences: check.differences },
      "drift: declaring again",
    );
    await kind.declare(client, desired.spec);
  } else if (!recall.known && !check?.matches) {
    await kind.declare(client, desired.spec);
    deps.logger.info(log, "declared on the broker");
    if (desired.supersedes) {
      await desired.supersedes(broker);
      deps.logger.info(log, "removed what the declaration replaces");
    }
  }
  return {
    ...(check?.listedAt === undefined ? {} : { verifiedAt: check.listedAt }),
    ...(recall.known && check?.exists === false ? { missing: true } : {}),
  };
}

/** Seed 000: a definitions import on node boot brings `guest` back; each verification removes it. */
async function deleteGuestWhenDue(
  deps: ControllerDeps,
  client: ManagementClient,
  brokerKey: string,
  now: number,
): Promise<void> {
  if (!deps.settings.deleteGuestUser) return;
  const last = deps.state.guestDeletedAt.get(brokerKey);
  if (last !== undefined && now - last < deps.settings.verificationPeriodMs) return;
  deps.state.guestDeletedAt.set(brokerKey, now);
  try {
    const outcome = await deleteGuestUser(client);
    if (outcome === "deleted") deps.logger.info({ broker: brokerKey }, "deleted the broker's guest user");
  } catch (error) {
    // Not this object's failure: the next verification tries again.
    deps.state.guestDeletedAt.delete(brokerKey);
    const message = error instanceof Error ? error.message : String(error);
    deps.logger.warn({ broker: brokerKey, error: message }, "deleting the guest user failed");
  }
}
