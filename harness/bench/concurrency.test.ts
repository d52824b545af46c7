// The benchmark's work pool: a bounded number in flight, and no new item once the run is interrupted.
import { describe, expect, it } from "vitest";
import { inParallel, range } from "./concurrency.ts";

describe("inParallel", () => {
  it("runs every item with at most `concurrency` in flight", async () => {
    let inFlight = 0;
    let most = 0;
    const done: number[] = [];
    await inParallel(range(20), 3, async (i) => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight--;
      done.push(i);
    });
    expect(done.sort((a, b) => a - b)).toEqual(range(20));
    expect(most).toBe(3);
  });

  it("takes no new item once its signal is aborted, and lets the items in flight finish", async () => {
    const abort = new AbortController();
    const started: number[] = [];
    const finished: number[] = [];
    await inParallel(
      range(100),
      2,
      async (i) => {
        started.push(i);
        if (i === 5) abort.abort(new Error("interrupted"));
        await new Promise((resolve) => setTimeout(resolve, 1));
        finished.push(i);
      },
      abort.signal,
    );
    expect(started.length).toBeLessThanOrEqual(7);
    expect(finished.sort((a, b) => a - b)).toEqual(started.sort((a, b) => a - b));
  });
});
