// A rotation owed inside its window and held past the window's end by the namespace's bound
// (--namespace-rotation-limit) starts once the bound lets it go, not in the next window, through the
// operator process on the real parts. Two orders of one namespace, one window an hour (a minute long)
// that opens after both fell due, a bound of one rotation per 70 s: the first to reach its moment rotates,
// the other is held until 70 s after it, always after the window closed. About four minutes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { windowedMoment, type RotationWindow } from "../src/orders/core/generations/window.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import {
  applyOrder,
  createWorld,
  destroyWorld,
  isReady,
  userChildCreated,
  waitForOrder,
  type World,
} from "../harness/world/world.ts";

const MINUTE = 60_000;
const BOUND_MS = 70_000;
const ms = (text: string | undefined) => (text ? Date.parse(text) : NaN);
const iso = (t: number) => new Date(t).toISOString();

describe("a rotation held past its window by the namespace's bound, operator process", () => {
  let world: World | undefined;
  let operator: OperatorProcess | undefined;
  const w = (): World => {
    if (!world) throw new Error("no world");
    return world;
  };

  beforeAll(async () => {
    world = await createWorld("window-bound");
    operator = await OperatorProcess.start({
      args: ["--namespace-rotation-limit=1", `--namespace-rotation-window=${BOUND_MS / 1000}s`],
    });
  }, 20 * 60_000);

  afterAll(async () => {
    try {
      await destroyWorld(world);
    } finally {
      await operator?.stop();
    }
  }, 120_000);

  it(
    "starts the held rotation when the bound lets it go, after the window closed",
    async () => {
      // Generation 1 goes live within seconds and the next falls due a minute later; the window opens at
      // the first whole minute at least 20 s after that (generation 1 takes about 5 s), once an hour, so the next one is far away.
      const start = Math.ceil((Date.now() + MINUTE + 25_000) / MINUTE) * MINUTE;
      const window: RotationWindow = {
        schedule: `${new Date(start).getUTCMinutes()} * * * *`,
        timeZone: "UTC",
        durationMs: MINUTE,
      };
      const end = start + MINUTE;
      const spec = {
        rotation: {
          interval: "1m",
          gracePeriod: "10s",
          window: { schedule: window.schedule, duration: "1m" },
        },
        deletionPolicy: "Delete",
      };
      const names = ["first", "second"];
      await Promise.all(names.map((name) => applyOrder(w(), name, spec)));
      const live = await Promise.all(
        names.map((name) =>
          waitForOrder(
            w(),
            name,
            `${name}: generation 1 Ready`,
            (o) => isReady(o) && o?.status?.passwordGeneration === 1,
            60_000,
          ),
        ),
      );
      for (const o of live) {
        const due = ms(o?.status?.lastRotation) + MINUTE;
        const moment = windowedMoment(window, o?.metadata?.uid ?? "", new Date(due))?.getTime() ?? NaN;
        // Due before the window opens; its moment inside it.
        expect(due).toBeLessThan(start);
        expect(moment).toBeGreaterThanOrEqual(start);
        expect(moment).toBeLessThan(end);
      }

      // Both rotate: the held one before the hour's next window, which opens 59 minutes after this one closed.
      const rotated = async (name: string) =>
        waitForOrder(
          w(),
          name,
          `${name}: generation 2`,
          (o) => (o?.status?.passwordGeneration ?? 0) >= 2,
          end + BOUND_MS + MINUTE - Date.now(),
        );
      const done = await Promise.all(names.map(rotated));
      const created = await Promise.all(names.map((name) => userChildCreated(w(), name, 2)));
      const [early = NaN, late = NaN] = [...created].sort((a, b) => a - b);
      console.log({ window: [iso(start), iso(end)], successorsCreated: created.map(iso) });
      // The first successor inside the window; the second held by the bound until 70 s after it, which
      // is after the window closed (second precision on both).
      expect(early).toBeGreaterThanOrEqual(start);
      expect(early).toBeLessThan(end);
      expect(late - early).toBeGreaterThanOrEqual(BOUND_MS - 1_000);
      expect(late).toBeGreaterThanOrEqual(end);
      expect(late - early).toBeLessThan(BOUND_MS + 30_000);
      // One rotation each, and the next in the hour's next window.
      for (const o of done) {
        expect(o?.status?.passwordGeneration).toBe(2);
        expect(ms(o?.status?.nextRotation)).toBeGreaterThanOrEqual(start + 60 * MINUTE);
      }
    },
    8 * 60_000,
  );
});
