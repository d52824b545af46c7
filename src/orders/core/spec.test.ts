import { describe, expect, it } from "vitest";
import type { RabbitMQVhost } from "../../api/index.ts";
import { parseDuration } from "../../runtime/base/duration.ts";
import { resolveSpec, rotationStatusOf, windowIssues } from "./spec.ts";

describe("parseDuration", () => {
  it.each([
    ["0s", 0],
    ["0", 0],
    ["3m", 180_000],
    ["1h30m", 5_400_000],
    ["1.5h", 5_400_000],
    ["720h", 2_592_000_000],
    ["500ms", 500],
    ["-1h", -3_600_000],
  ])("%s is %d ms", (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(["", "3", "m", "1x", "1h 2m", "."])("refuses %j", (text) =>
    expect(parseDuration(text)).toBeUndefined(),
  );
});

const order = (spec: Partial<RabbitMQVhost["spec"]>): RabbitMQVhost => ({
  metadata: { name: "w", namespace: "t" },
  spec: { controlPlaneRef: { name: "cp" }, ...spec },
});

describe("resolveSpec", () => {
  it("applies the defaults itself", () => {
    expect(resolveSpec(order({}))).toEqual({
      rotation: { declaredGeneration: 1, intervalMs: 720 * 3_600_000, gracePeriodMs: 24 * 3_600_000 },
      deletionPolicy: "retain",
    });
  });

  it("lower-cases the policy and reads the schedule", () => {
    const r = resolveSpec(
      order({
        deletionPolicy: "Delete",
        passwordGeneration: 4,
        rotation: { interval: "0s", gracePeriod: "5s" },
      }),
    );
    expect(r).toEqual({
      rotation: { declaredGeneration: 4, intervalMs: 0, gracePeriodMs: 5_000 },
      deletionPolicy: "delete",
    });
  });
});

describe("resolveSpec with a rotation window", () => {
  it("resolves the window, UTC by default, seeded by the uid", () => {
    const o = order({ rotation: { interval: "24h", window: { schedule: "0 2 * * *", duration: "2h" } } });
    const r = resolveSpec({ ...o, metadata: { ...o.metadata, uid: "uid-7" } }).rotation;
    expect(r.window).toEqual({ schedule: "0 2 * * *", timeZone: "UTC", durationMs: 7_200_000 });
    expect(r.seed).toBe("uid-7");
  });

  it("seeds an object without a uid with its namespace and name, and a zone as written", () => {
    const r = resolveSpec(
      order({ rotation: { window: { schedule: "*/5 * * * *", timeZone: "Europe/Berlin", duration: "1m" } } }),
    ).rotation;
    expect(r.window?.timeZone).toBe("Europe/Berlin");
    expect(r.seed).toBe("t/w");
  });
});

describe("windowIssues", () => {
  it("names the window's fields the runtime cannot use", () => {
    expect(windowIssues(order({}).spec)).toEqual([]);
    expect(
      windowIssues(
        order({ rotation: { window: { schedule: "0 0 30 2 *", timeZone: "Nowhere/Land", duration: "1h" } } })
          .spec,
      ).map((i) => i.path),
    ).toEqual(["spec.rotation.window.timeZone", "spec.rotation.window.schedule"]);
  });
});

describe("rotationStatusOf", () => {
  it("reads times and treats zero generations as none", () => {
    expect(
      rotationStatusOf({
        passwordGeneration: 0,
        lastRotation: "2030-01-01T00:00:00Z",
        previousPasswordGeneration: 0,
      }),
    ).toEqual({
      passwordGeneration: undefined,
      lastRotation: new Date("2030-01-01T00:00:00Z"),
      nextRotation: undefined,
      previousPasswordGeneration: undefined,
      previousPasswordDeleteAt: undefined,
    });
  });
});
