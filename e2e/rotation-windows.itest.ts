// Rotation windows (issue 47) through the operator process on the real parts: a scheduled rotation that
// falls due outside the order's window waits until the window opens and starts at the order's moment
// inside it; two orders created together with one window rotate at different moments, both inside. The
// windows open every third minute for one minute (interval 1m), at the minutes that make the first one
// open one to two minutes after the rotations fall due. Also: the API server refuses a malformed window
// (CEL), and a window the runtime cannot use (an unknown time zone) stalls the order with InvalidObject.
// About four minutes.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { windowedMoment, type RotationWindow } from "../src/orders/core/generations/window.ts";
import { isApiError } from "../harness/world/kube.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import {
  applyOrder,
  condition,
  createWorld,
  destroyWorld,
  isReady,
  readOrder,
  userChildCreated,
  waitForOrder,
  type World,
} from "../harness/world/world.ts";

const MINUTE = 60_000;
const ms = (text: string | undefined) => (text ? Date.parse(text) : NaN);
const iso = (t: number) => new Date(t).toISOString();

describe("rotation windows, operator process", () => {
  let world: World | undefined;
  let operator: OperatorProcess | undefined;
  const w = (): World => {
    if (!world) throw new Error("no world");
    return world;
  };
  // The minute (mod 3) the windows open at, and its start in ms: set by the second test.
  let offset: number | undefined;
  const r0 = () => (offset ?? NaN) * MINUTE;
  const ref = (name: string) => ({
    group: "c5c3.io",
    version: "v1alpha1",
    plural: "rabbitmqvhosts",
    namespace: w().tenantNs,
    name,
  });

  beforeAll(async () => {
    world = await createWorld("windows");
    operator = await OperatorProcess.start();
  }, 20 * 60_000);

  afterAll(async () => {
    try {
      await destroyWorld(world);
    } finally {
      await operator?.stop();
    }
  }, 120_000);

  it("refuses a malformed window at the API server, and stalls on a time zone nobody knows", async () => {
    const refusal = async (window: Record<string, unknown>) =>
      applyOrder(w(), "malformed", { rotation: { interval: "1h", window } }).then(
        () => "taken",
        (error: unknown) => {
          if (!isApiError(error, 422)) throw error;
          const body = (error as { body?: unknown }).body;
          return typeof body === "string" ? body : JSON.stringify(body);
        },
      );
    expect(await refusal({ schedule: "0 2 * *", duration: "1h" })).toMatch(/5-field cron expression/);
    expect(await refusal({ schedule: "@daily", duration: "1h" })).toMatch(/5-field cron expression/);
    expect(await refusal({ schedule: "0 2 * * *", duration: "30s" })).toMatch(/at least 1m and at most 24h/);
    expect(await refusal({ schedule: "0 2 * * *", duration: "25h" })).toMatch(/at least 1m and at most 24h/);
    expect(await refusal({ schedule: "0 2 * * *", timeZone: "+01:00", duration: "1h" })).toMatch(
      /IANA time zone name/,
    );
    expect(await refusal({ schedule: "0 2 * * *" })).toMatch(/duration/);

    await applyOrder(w(), "nowhere", {
      rotation: {
        interval: "1h",
        gracePeriod: "10s",
        window: { schedule: "0 2 * * *", timeZone: "Mars/Olympus", duration: "1h" },
      },
      deletionPolicy: "Delete",
    });
    const stalled = await waitForOrder(
      w(),
      "nowhere",
      "Stalled InvalidObject",
      (o) => condition(o, "Stalled")?.reason === "InvalidObject",
      30_000,
    );
    expect(condition(stalled, "Ready")?.message).toMatch(
      /spec\.rotation\.window\.timeZone: unknown time zone "Mars\/Olympus"/,
    );
    expect(stalled?.status?.passwordGeneration).toBeUndefined();
    // Fixed by its tenant, it is served.
    await applyOrder(w(), "nowhere", {
      rotation: {
        interval: "1h",
        gracePeriod: "10s",
        window: { schedule: "0 2 * * *", timeZone: "Europe/Berlin", duration: "1h" },
      },
      deletionPolicy: "Delete",
    });
    await waitForOrder(w(), "nowhere", "Ready once fixed", isReady, 90_000);
  }, 150_000);

  it(
    "holds two orders' due rotations until the window opens and starts each at its own moment inside",
    async () => {
      // The first generation goes live a few seconds after creation and the next falls due a minute later.
      // The windows open at the minutes r, r+3, ...: r puts that time in the middle of the two closed
      // minutes between two windows, so that it may come 30 s earlier or later and still be held.
      const dueGuess = Date.now() + MINUTE + 5_000;
      const r = Math.floor((dueGuess - 90_000) / MINUTE) % 3;
      offset = r;
      const window: RotationWindow = { schedule: `${r}-59/3 * * * *`, timeZone: "UTC", durationMs: MINUTE };
      const spec = {
        rotation: {
          interval: "1m",
          gracePeriod: "10s",
          window: { schedule: window.schedule, duration: "1m" },
        },
        deletionPolicy: "Delete",
      };
      const names = ["early", "late"];
      await Promise.all(names.map((name) => applyOrder(w(), name, spec)));
      const live = await Promise.all(
        names.map((name) =>
          waitForOrder(
            w(),
            name,
            `${name}: generation 1 Ready`,
            (o) => isReady(o) && o?.status?.passwordGeneration === 1,
            90_000,
          ),
        ),
      );

      // What the test expects of each order, from its lastRotation and uid alone.
      const expected = live.map((o) => {
        const last = ms(o?.status?.lastRotation);
        const due = last + MINUTE;
        // The first window [start, start + 1m) that closes after the due time: starts at minutes ≡ r (mod 3).
        let start = Math.ceil((due - MINUTE + 1) / MINUTE) * MINUTE;
        while ((start / MINUTE) % 3 !== r) start += MINUTE;
        const moment = windowedMoment(window, o?.metadata?.uid ?? "", new Date(due))?.getTime() ?? NaN;
        return { name: o?.metadata?.name ?? "", due, start, end: start + MINUTE, moment };
      });
      console.log(
        expected.map((e) => ({
          ...e,
          due: iso(e.due),
          start: iso(e.start),
          end: iso(e.end),
          moment: iso(e.moment),
        })),
      );
      for (const e of expected) {
        // The rotation falls due before its window opens: the window holds it.
        expect(e.due).toBeLessThan(e.start);
        expect(e.moment).toBeGreaterThanOrEqual(e.start);
        expect(e.moment).toBeLessThan(e.end);
      }
      // status.nextRotation shows each order's moment: inside the window, and apart.
      const shown = live.map((o) => ms(o?.status?.nextRotation));
      expect(shown).toEqual(expected.map((e) => e.moment));
      // One second in sixty, two uids share the second: then the spread has nothing to show this run.
      if (shown[0] !== shown[1]) expect(new Set(shown).size).toBe(2);
      else console.log("both orders' moments fell in the same second: not a spread to show");

      // Watch both until each has rotated, noting when generation 2 was first seen.
      const firstSeen = new Map<string, number>();
      const deadline = Math.max(...expected.map((e) => e.end)) + MINUTE;
      while (firstSeen.size < names.length && Date.now() < deadline) {
        for (const name of names) {
          if (firstSeen.has(name)) continue;
          const o = await readOrder(w(), name);
          if ((o?.status?.passwordGeneration ?? 0) >= 2) firstSeen.set(name, Date.now());
          // Before its window, nextRotation does not move.
          else expect(ms(o?.status?.nextRotation)).toBe(expected[names.indexOf(name)]?.moment);
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect([...firstSeen.keys()].sort()).toEqual([...names].sort());

      for (const e of expected) {
        const o = await readOrder(w(), e.name);
        const rotated = ms(o?.status?.lastRotation);
        const created = await userChildCreated(w(), e.name, 2);
        console.log({
          order: e.name,
          moment: iso(e.moment),
          successorCreated: iso(created),
          lastRotation: iso(rotated),
          firstSeen: iso(firstSeen.get(e.name) ?? NaN),
        });
        // Nothing of the rotation before the window opened, nor before the order's moment: the successor's
        // User is created at the moment (second precision), the switch follows within seconds.
        expect(firstSeen.get(e.name)).toBeGreaterThanOrEqual(e.start);
        expect(created).toBeGreaterThanOrEqual(e.moment);
        expect(created).toBeLessThan(e.end);
        expect(rotated).toBeGreaterThanOrEqual(e.moment);
        expect(rotated - e.moment).toBeLessThan(30_000);
        // And the next one is again in a window of the order's own.
        const next = ms(o?.status?.nextRotation);
        expect((next - r * MINUTE) % (3 * MINUTE)).toBeLessThan(MINUTE);
      }
    },
    6 * 60_000,
  );

  it("does not hold a raise of passwordGeneration outside the window", async () => {
    // After the scheduled rotation's sweep, with its window closed and the next two minutes away.
    const swept = await waitForOrder(
      w(),
      "early",
      "the sweep of generation 1",
      (o) => (o?.status?.passwordGeneration ?? 0) >= 2 && o?.status?.previousPasswordGeneration === undefined,
      60_000,
    );
    const closes =
      ms(swept?.status?.lastRotation) - ((ms(swept?.status?.lastRotation) - r0()) % (3 * MINUTE)) + MINUTE;
    if (Date.now() < closes) await new Promise((resolve) => setTimeout(resolve, closes - Date.now() + 1000));
    const o = await readOrder(w(), "early");
    expect(ms(o?.status?.nextRotation) - Date.now()).toBeGreaterThan(MINUTE);
    const generation = (o?.status?.passwordGeneration ?? 0) + 1;
    const before = Date.now();
    await w().custom.patchNamespacedCustomObject(
      { ...ref("early"), body: { spec: { passwordGeneration: generation } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    const raised = await waitForOrder(
      w(),
      "early",
      `generation ${generation}`,
      (x) => x?.status?.passwordGeneration === generation,
      60_000,
    );
    // Within seconds, whatever the window: the raise is not held.
    expect(ms(raised?.status?.lastRotation) - before).toBeLessThan(30_000);
  }, 90_000);
});
