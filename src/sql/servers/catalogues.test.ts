import { describe, expect, it } from "vitest";
import type { Catalogue, SqlSession } from "../server/index.ts";
import { PeriodCatalogues } from "./catalogues.ts";

const empty = (): Catalogue => ({ schemata: new Map(), users: new Map(), privileges: new Map() });
const session = (): SqlSession => ({ run: async () => {}, select: async () => [] });

describe("PeriodCatalogues", () => {
  it("reads a server's catalogue once a period, the verifications meanwhile joining it", async () => {
    let reads = 0;
    const catalogues = new PeriodCatalogues(async () => (reads++, empty()));
    const server = session();
    const [a, b] = await Promise.all([
      catalogues.read(server, 100, 1_000),
      catalogues.read(server, 500, 1_000),
    ]);
    expect(reads).toBe(1);
    expect([a.startedAt, b.startedAt]).toEqual([100, 100]);
    expect((await catalogues.read(server, 1_100, 1_000)).startedAt).toBe(1_100);
    expect(reads).toBe(2);
  });

  it("keeps a catalogue per pool, so a new pool (a rotated administrator) reads its own", async () => {
    let reads = 0;
    const catalogues = new PeriodCatalogues(async () => (reads++, empty()));
    await catalogues.read(session(), 0, 1_000);
    await catalogues.read(session(), 0, 1_000);
    expect(reads).toBe(2);
  });

  it("forgets a failed read, so the next verification reads again", async () => {
    let reads = 0;
    const catalogues = new PeriodCatalogues(async () => {
      reads++;
      if (reads === 1) throw new Error("connect ECONNREFUSED");
      return empty();
    });
    const server = session();
    await expect(catalogues.read(server, 0, 1_000)).rejects.toThrow("ECONNREFUSED");
    await expect(catalogues.read(server, 1, 1_000)).resolves.toMatchObject({ startedAt: 1 });
    expect(reads).toBe(2);
  });
});
