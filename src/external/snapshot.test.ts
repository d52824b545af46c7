import { describe, expect, it } from "vitest";
import { PeriodSnapshots } from "./snapshot.ts";

const PERIOD = 300_000;

/** An endpoint named by its login, as a broker's is. */
interface Login {
  endpoint: string;
}
const broker = (endpoint: string): Login => ({ endpoint });
const keyOf = (login: Login) => login.endpoint;
type Lists = Record<"vhosts" | "vhost-limits" | "users", unknown[]>;

/** A read of one part that records each and answers when `release` is called. */
function lists(options: { fail?: boolean } = {}) {
  const asked: string[] = [];
  const pending: (() => void)[] = [];
  const list = (login: Login, part: keyof Lists) => {
    asked.push(`${login.endpoint} ${part}`);
    return new Promise<unknown[]>((resolve, reject) => {
      pending.push(() => (options.fail ? reject(new Error("broker down")) : resolve([])));
    });
  };
  const release = () => pending.splice(0).forEach((answer) => answer());
  return { asked, release, list };
}

const part = ["catalogue"] as const;
const empty = () => ({ schemata: [] });
const session = (): object => ({});

describe("the snapshots of the verification period, in parts (a broker's list endpoints)", () => {
  it("lists a broker's endpoint once for every verification due meanwhile, and again after a period", async () => {
    const { asked, release, list } = lists();
    const listings = new PeriodSnapshots(keyOf, list);
    const a = broker("admin@a");
    const first = listings.read(a, ["vhosts", "vhost-limits"], 1_000, PERIOD);
    const joined = listings.read(a, ["vhosts"], 1_500, PERIOD);
    release();
    expect((await first).startedAt).toBe(1_000);
    expect((await joined).startedAt).toBe(1_000);
    // Later in the same period: the listing there is.
    expect((await listings.read(a, ["vhosts"], 1_000 + PERIOD - 1, PERIOD)).startedAt).toBe(1_000);
    expect(asked).toEqual(["admin@a vhosts", "admin@a vhost-limits"]);
    // A period after it started, it answers no more.
    const next = listings.read(a, ["vhosts"], 1_000 + PERIOD, PERIOD);
    release();
    expect((await next).startedAt).toBe(1_000 + PERIOD);
    expect(asked).toHaveLength(3);
  });

  it("keeps brokers and logins apart, and dates a listing of several endpoints by the oldest", async () => {
    const { asked, release, list } = lists();
    const listings = new PeriodSnapshots(keyOf, list);
    const vhosts = listings.read(broker("admin@a"), ["vhosts"], 1_000, PERIOD);
    const other = listings.read(broker("admin@b"), ["vhosts"], 1_000, PERIOD);
    release();
    await Promise.all([vhosts, other]);
    const both = listings.read(broker("admin@a"), ["vhosts", "vhost-limits"], 2_000, PERIOD);
    release();
    expect((await both).startedAt).toBe(1_000);
    expect(asked).toEqual(["admin@a vhosts", "admin@b vhosts", "admin@a vhost-limits"]);
  });

  it("forgets a listing that failed: every verification that joined it fails, the next one lists again", async () => {
    const failing = lists({ fail: true });
    const listings = new PeriodSnapshots(keyOf, failing.list);
    const a = broker("admin@a");
    const first = listings.read(a, ["users"], 1_000, PERIOD);
    const joined = listings.read(a, ["users"], 1_001, PERIOD);
    failing.release();
    await expect(first).rejects.toThrow("broker down");
    await expect(joined).rejects.toThrow("broker down");
    const again = listings.read(a, ["users"], 1_002, PERIOD);
    failing.release();
    await expect(again).rejects.toThrow("broker down");
    expect(failing.asked).toEqual(["admin@a users", "admin@a users"]);
  });

  it("lists a broker again once it was found emptied, whatever the period says", async () => {
    const { asked, release, list } = lists();
    const listings = new PeriodSnapshots(keyOf, list);
    const a = broker("admin@a");
    const before = listings.read(a, ["vhosts"], 1_000, PERIOD);
    release();
    await before;
    const after = listings.read(a, ["vhosts"], 3_000, PERIOD, 2_000);
    release();
    expect((await after).startedAt).toBe(3_000);
    // The listing since the loss answers the next ones.
    expect((await listings.read(a, ["vhosts"], 4_000, PERIOD, 2_000)).startedAt).toBe(3_000);
    expect(asked).toEqual(["admin@a vhosts", "admin@a vhosts"]);
  });
});

describe("the snapshots of the verification period, in one part (a server's catalogue)", () => {
  it("reads a server's catalogue once a period, the verifications meanwhile joining it", async () => {
    let reads = 0;
    const catalogues = new PeriodSnapshots<object, { catalogue: unknown }>(
      (pool) => pool,
      async () => (reads++, empty()),
    );
    const server = session();
    const [a, b] = await Promise.all([
      catalogues.read(server, part, 100, 1_000),
      catalogues.read(server, part, 500, 1_000),
    ]);
    expect(reads).toBe(1);
    expect([a.startedAt, b.startedAt]).toEqual([100, 100]);
    expect((await catalogues.read(server, part, 1_100, 1_000)).startedAt).toBe(1_100);
    expect(reads).toBe(2);
  });

  it("keeps a catalogue per pool, so a new pool (a rotated administrator) reads its own", async () => {
    let reads = 0;
    const catalogues = new PeriodSnapshots<object, { catalogue: unknown }>(
      (pool) => pool,
      async () => (reads++, empty()),
    );
    await catalogues.read(session(), part, 0, 1_000);
    await catalogues.read(session(), part, 0, 1_000);
    expect(reads).toBe(2);
  });

  it("forgets a failed read, so the next verification reads again", async () => {
    let reads = 0;
    const catalogues = new PeriodSnapshots<object, { catalogue: unknown }>(
      (pool) => pool,
      async () => {
        reads++;
        if (reads === 1) throw new Error("connect ECONNREFUSED");
        return empty();
      },
    );
    const server = session();
    await expect(catalogues.read(server, part, 0, 1_000)).rejects.toThrow("ECONNREFUSED");
    await expect(catalogues.read(server, part, 1, 1_000)).resolves.toMatchObject({ startedAt: 1 });
    expect(reads).toBe(2);
  });
});
