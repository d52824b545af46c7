import { describe, expect, it } from "vitest";
import { parseDuration } from "./duration.ts";

describe("parseDuration", () => {
  it.each([
    ["0", 0],
    ["0s", 0],
    ["-0s", 0],
    ["+0", 0],
    ["500ms", 500],
    ["3m", 180_000],
    ["1m30s", 90_000],
    ["1h30m", 5_400_000],
    ["1.5h", 5_400_000],
    [".5s", 500],
    ["1.s", 1_000],
    ["720h", 2_592_000_000],
    ["-1h", -3_600_000],
    ["+15s", 15_000],
    ["1h2m3s4ms", 3_723_004],
    ["1500us", 2],
    ["1500µs", 2],
    ["1500μs", 2],
    ["2000000ns", 2],
    ["2562047h", 9_223_369_200_000],
  ])("%s is %d ms", (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each([
    "",
    "3",
    "15",
    "m",
    "1x",
    "1h 2m",
    " 1h",
    ".",
    ".s",
    "-",
    "00",
    "1h-2m",
    "1e3s",
    "1H",
    "2562048h",
  ])("refuses %j", (text) => expect(parseDuration(text)).toBeUndefined());
});
