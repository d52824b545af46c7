// The catalogues of the verification period, one per server pool: the latest one and when it started. A
// verification takes the one started within the last period, or starts one that every verification due
// meanwhile joins. An object confirmed by a catalogue is due again a period after that catalogue started,
// so the objects of a server fall due together and it is read about once a period, however many objects
// it holds (as the topology kinds' broker listings, src/topology/broker/period-listings.ts). A new pool (a
// rotated administrator) starts a catalogue of its own. Times are monotonic, as the memo's are.
import { readCatalogue, type Catalogue, type SqlSession } from "../server/index.ts";

interface Entry {
  startedAt: number;
  catalogue: Promise<Catalogue>;
}

export interface PeriodCatalogue {
  catalogue: Catalogue;
  /** When it was asked for: what it says holds from then on. */
  startedAt: number;
}

export class PeriodCatalogues {
  readonly #entries = new WeakMap<SqlSession, Entry>();
  readonly #read: (session: SqlSession) => Promise<Catalogue>;

  constructor(read: (session: SqlSession) => Promise<Catalogue> = readCatalogue) {
    this.#read = read;
  }

  /** The catalogue of `server` started after `now - periodMs`; a failed read is forgotten. */
  async read(server: SqlSession, now: number, periodMs: number): Promise<PeriodCatalogue> {
    let entry = this.#entries.get(server);
    if (!entry || entry.startedAt <= now - periodMs) {
      const started: Entry = { startedAt: now, catalogue: this.#read(server) };
      started.catalogue.catch(() => {
        if (this.#entries.get(server) === started) this.#entries.delete(server);
      });
      this.#entries.set(server, started);
      entry = started;
    }
    return { catalogue: await entry.catalogue, startedAt: entry.startedAt };
  }
}
