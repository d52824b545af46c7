import { describe, expect, it } from "vitest";
import type { ManagementClient } from "../../rabbitmq/client.ts";
import { fileItems, type BrokerListing, type ListedResource } from "./listing.ts";
import { PeriodListings } from "./period-listings.ts";

const PERIOD = 300_000;
const broker = (endpoint: string) => ({ endpoint }) as ManagementClient;

/** A list function that records each listing and answers when `release` is called (or at once). */
function lists(options: { fail?: boolean } = {}) {
  const asked: string[] = [];
  const pending: (() => void)[] = [];
  const list = <R extends ListedResource>(client: ManagementClient, resource: R) => {
    asked.push(`${client.endpoint} ${resource}`);
    return new Promise<BrokerListing[R]>((resolve, reject) => {
      pending.push(() =>
        options.fail ? reject(new Error("broker down")) : resolve(fileItems(resource, [])),
      );
    });
  };
  const release = () => pending.splice(0).forEach((answer) => answer());
  return { asked, release, list: list as ConstructorParameters<typeof PeriodListings>[0] };
}

describe("the listings of the verification period", () => {
  it("lists a broker's endpoint once for every verification due meanwhile, and again after a period", async () => {
    const { asked, release, list } = lists();
    const listings = new PeriodListings(list);
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
    const listings = new PeriodListings(list);
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
    const listings = new PeriodListings(failing.list);
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
    const listings = new PeriodListings(list);
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
