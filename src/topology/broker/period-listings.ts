// The listings of the verification period, per broker login and list endpoint: the latest one and when
// it started. A verification takes the one started within the last period, or starts one that every
// verification due meanwhile joins. An object confirmed by a listing is due again a period after that
// listing started, so the objects of a broker fall due together and it is listed about once a period,
// however many objects it holds.
import type { ManagementClient } from "../../rabbitmq/client.ts";
import { listResource, type BrokerListing, type ListedResource } from "./listing.ts";

interface Entry<R extends ListedResource> {
  startedAt: number;
  listing: Promise<BrokerListing[R]>;
}

type Entries = { [R in ListedResource]?: Entry<R> };

export interface PeriodListing<R extends ListedResource> {
  listing: Pick<BrokerListing, R>;
  /** When the oldest of its lists was asked for: what it says holds from then on. */
  startedAt: number;
}

export class PeriodListings {
  readonly #brokers = new Map<string, Entries>();
  readonly #list: typeof listResource;

  /** `list` reads one list endpoint (the broker's, by default). */
  constructor(list: typeof listResource = listResource) {
    this.#list = list;
  }

  /**
   * `resources` of the broker behind `client`, each listed after `now - periodMs` and after `since` (when
   * the broker was found emptied): a listing started before that is dropped, and a failed one is
   * forgotten, so the next verification lists again.
   */
  async read<R extends ListedResource>(
    client: ManagementClient,
    resources: readonly R[],
    now: number,
    periodMs: number,
    since?: number,
  ): Promise<PeriodListing<R>> {
    this.#dropBefore(now - periodMs);
    const entries = this.#brokers.get(client.endpoint) ?? {};
    for (const [resource, entry] of Object.entries(entries)) {
      if (since !== undefined && entry.startedAt < since) delete entries[resource as ListedResource];
    }
    this.#brokers.set(client.endpoint, entries);
    const taken = resources.map((resource) => this.#entry(entries, client, resource, now));
    const lists = await Promise.all(taken.map(async ([resource, entry]) => [resource, await entry.listing]));
    return {
      listing: Object.fromEntries(lists) as Pick<BrokerListing, R>,
      startedAt: Math.min(...taken.map(([, entry]) => entry.startedAt)),
    };
  }

  #entry<R extends ListedResource>(
    entries: Entries,
    client: ManagementClient,
    resource: R,
    now: number,
  ): [R, Entry<R>] {
    const held = entries[resource] as Entry<R> | undefined;
    if (held) return [resource, held];
    const entry: Entry<R> = { startedAt: now, listing: this.#list(client, resource) };
    (entries as Record<R, Entry<R>>)[resource] = entry;
    entry.listing.catch(() => {
      if (entries[resource] === entry) delete entries[resource];
    });
    return [resource, entry];
  }

  /** Listings older than a period answer no verification: they go, and so does a broker with none left. */
  #dropBefore(oldest: number): void {
    for (const [broker, entries] of this.#brokers) {
      for (const [resource, entry] of Object.entries(entries)) {
        if (entry.startedAt <= oldest) delete entries[resource as ListedResource];
      }
      if (Object.keys(entries).length === 0) this.#brokers.delete(broker);
    }
  }
}
