// Which of the server's accounts are an order's strays: named exactly `<prefix><N>` and declared by no
// User child, as the core's predicate says; any other name, however like the prefix, is kept.
import { describe, expect, it } from "vitest";
import { generationOfUser } from "../core/evidence.ts";
import { orderHash } from "../core/naming.ts";
import { userName, userNamePrefix } from "./naming.ts";
import { likePrefix, strayAccounts, type Account } from "./stray-accounts.ts";

const cell0 = { cluster: "", namespace: "tenant-a", name: "nova-cell0" };
const prefix = userNamePrefix(cell0);

/** The core's predicate (../core/strays.ts): the order's own generation N, and no User declares N. */
const undeclared =
  (...declared: number[]) =>
  (username: string) => {
    const generation = generationOfUser({ userName }, cell0, username);
    return generation > 0 && !declared.includes(generation);
  };

const at = (user: string, host = "%"): Account => ({ user, host });
const names = (accounts: Account[]) => accounts.map((a) => `${a.user}@${a.host}`);

describe("an order's stray accounts", () => {
  it("share the prefix of every generation's account", () => {
    expect(prefix).toBe("nova-cell0-13e1aacc-v");
    expect(`${prefix}7`).toBe(userName(cell0, 7));
  });

  it("are the order's generations no User declares, at every host", () => {
    const listed = [at(`${prefix}1`), at(`${prefix}2`), at(`${prefix}3`), at(`${prefix}3`, "localhost")];
    expect(names(strayAccounts(listed, prefix, undeclared(2)))).toEqual([
      `${prefix}1@%`,
      `${prefix}3@%`,
      `${prefix}3@localhost`,
    ]);
  });

  it("keep the live and the superseded generation a User still declares", () => {
    const listed = [at(`${prefix}4`), at(`${prefix}5`)];
    expect(strayAccounts(listed, prefix, undeclared(4, 5))).toEqual([]);
  });

  it("never hold a name that is not exactly <prefix><N>, whatever the predicate says", () => {
    const other = { ...cell0, name: `${prefix}1` };
    const listed = [
      // Another order whose name begins with this order's prefix.
      at(userName(other, 1)),
      // Another order's hash, the same stem.
      at(`nova-cell0-${orderHash({ ...cell0, namespace: "tenant-b" })}-v1`),
      at(`${prefix}`),
      at(`${prefix}0`),
      at(`${prefix}02`),
      at(`${prefix}2x`),
      at(`${prefix}2 `),
      at(`${prefix}-2`),
      at(`${prefix.toUpperCase()}2`),
      at("nova-cell0-13e1aacc-w2"),
    ];
    expect(strayAccounts(listed, prefix, () => true)).toEqual([]);
    expect(strayAccounts(listed, prefix, undeclared())).toEqual([]);
  });
});

describe("the LIKE pattern of a prefix", () => {
  it("takes _ and % (and its escape character !) literally and matches what follows", () => {
    expect(likePrefix(prefix)).toBe(`${prefix}%`);
    expect(likePrefix("a_b%c!d-v")).toBe("a!_b!%c!!d-v%");
  });
});
