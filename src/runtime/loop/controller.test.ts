import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { Controller, type Reconciler, type Request } from "./controller.ts";
import { NotFoundError, TerminalError, TransientError } from "../base/errors.ts";
import { FakeClock } from "../../../harness/fakes/fake-clock.ts";
import { createLogger } from "../base/logging.ts";
import { Metrics } from "./metrics.ts";

const flush = () => new Promise((resolve) => setImmediate(resolve));
const req: Request = { cluster: "", namespace: "ns", name: "a" };

function setup(
  reconcile: Reconciler,
  workers = 1,
  extra: {
    terminalRetryMs?: number;
    drift?: { minMs: number; maxMs: number };
    exists?: (r: Request) => boolean;
  } = {},
) {
  const clock = new FakeClock();
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  const metrics = new Metrics({ processMetrics: false, clock });
  const controller = new Controller({
    name: "test",
    reconcile,
    workers,
    timeoutMs: 60_000,
    transientRequeueMs: 30_000,
    ...extra,
    clock,
    log: createLogger({ level: "debug", destination }),
    metrics,
  });
  controller.start();
  const value = async (name: string, labels: Record<string, string> = {}) => {
    const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
    const match = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
    return match?.value ?? 0;
  };
  return { clock, controller, lines, value, errors: () => lines.filter((l) => l.level === "error") };
}

/** Advances the fake clock in small steps, letting promises settle in between. */
async function advance(clock: FakeClock, ms: number, step = 5): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    clock.advance(Math.min(step, ms - t));
    await flush();
  }
}

describe("Controller", () => {
  it("tells a pass when its request was queued, on the wall clock, however long it waited", async () => {
    let release = () => {};
    const queued = new Map<string, number>();
    const { clock, controller } = setup(async (r, context) => {
      queued.set(r.name, context.queuedAt);
      if (r.name === "a") await new Promise<void>((resolve) => (release = resolve));
    });
    controller.enqueue(req);
    await flush();
    const at = clock.now();
    controller.enqueue({ ...req, name: "b" });
    // The one worker holds "a" for 40 s; "b" waits.
    await advance(clock, 40_000, 1_000);
    release();
    await advance(clock, 1_000);
    expect(queued.get("b")).toBe(at);
    expect(clock.now() - at).toBeGreaterThanOrEqual(40_000);
    await controller.stop();
  });

  it("reconciles, and again after the requested delay", async () => {
    let calls = 0;
    const { clock, controller, value } = setup(async () =>
      ++calls === 1 ? { requeueAfterMs: 1000 } : undefined,
    );
    controller.enqueue(req);
    await flush();
    expect(calls).toBe(1);
    await advance(clock, 995);
    expect(calls).toBe(1);
    await advance(clock, 10);
    expect(calls).toBe(2);
    expect(await value("controller_runtime_reconcile_total", { result: "requeue_after" })).toBe(1);
    expect(await value("controller_runtime_reconcile_total", { result: "success" })).toBe(1);
    await controller.stop();
  });

  it("does not retry a terminal error until the object is enqueued again, and logs it as an error", async () => {
    let calls = 0;
    const { clock, controller, value, errors } = setup(async () => {
      calls++;
      throw new TerminalError("spec names an unsupported type", "UnsupportedType");
    });
    controller.enqueue(req);
    await advance(clock, 60_000, 1000);
    expect(calls).toBe(1);
    expect(await value("controller_runtime_terminal_reconcile_errors_total")).toBe(1);
    expect(await value("controller_runtime_reconcile_total", { result: "error" })).toBe(1);
    expect(errors().map((l) => l.msg)).toEqual(["reconcile failed terminally; waiting for a change"]);
    controller.enqueue(req);
    await flush();
    expect(calls).toBe(2);
    await controller.stop();
  });

  it("retries a terminal error after the backstop interval too", async () => {
    let calls = 0;
    const { clock, controller } = setup(
      async () => {
        calls++;
        throw new TerminalError("bad spec", "InvalidSpec");
      },
      1,
      { terminalRetryMs: 120_000 },
    );
    controller.enqueue(req);
    await advance(clock, 119_000, 1000);
    expect(calls).toBe(1);
    await advance(clock, 2_000, 1000);
    expect(calls).toBe(2);
    await controller.stop();
  });

  it("counts a transient error as a reconcile error, retries it after the interval, and warns with it", async () => {
    const times: number[] = [];
    const { clock, controller, errors, lines, value } = setup(async () => {
      times.push(clock.now());
      if (times.length < 3) throw new Error("declare vhost", { cause: new TransientError("broker busy") });
    });
    controller.enqueue(req);
    await advance(clock, 61_000, 500);
    expect(times.length).toBe(3);
    expect(times[1]! - times[0]!).toBe(30_000);
    expect(times[2]! - times[1]!).toBe(30_000);
    expect(errors()).toHaveLength(0);
    expect(await value("controller_runtime_reconcile_errors_total")).toBe(2);
    expect(await value("controller_runtime_reconcile_total", { result: "error" })).toBe(2);
    const warnings = lines.filter((l) => l.level === "warn");
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatchObject({ msg: "transient failure; retry scheduled", retryInMs: 30_000 });
    await controller.stop();
  });

  it("checks a reconciled key again within the drift window, and an earlier requeue wins", async () => {
    const times: number[] = [];
    const { clock, controller } = setup(
      async () => {
        times.push(clock.now());
        return times.length === 2 ? { requeueAfterMs: 1_000 } : { requeueAfterMs: 3_600_000 };
      },
      1,
      { drift: { minMs: 300_000, maxMs: 600_000 } },
    );
    controller.enqueue(req);
    await advance(clock, 601_000, 1000);
    expect(times.length).toBeGreaterThanOrEqual(2);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(300_000);
    expect(times[1]! - times[0]!).toBeLessThanOrEqual(601_000);
    await advance(clock, 2_000, 500);
    expect(times[2]! - times[1]!).toBe(1_000);
    await controller.stop();
  });

  it("does not re-check a key whose object is gone", async () => {
    let calls = 0;
    const { clock, controller } = setup(
      async () => {
        calls++;
      },
      1,
      { drift: { minMs: 1_000, maxMs: 2_000 }, exists: () => false },
    );
    controller.enqueue(req);
    await advance(clock, 10_000, 500);
    expect(calls).toBe(1);
    await controller.stop();
  });

  it("retries an unclassified error with growing backoff and logs it as an error", async () => {
    const times: number[] = [];
    const { clock, controller, errors, value } = setup(async () => {
      times.push(clock.now());
      if (times.length < 4) throw new Error("connection refused");
    });
    controller.enqueue(req);
    await advance(clock, 100, 1);
    expect(times.map((t) => t - times[0]!)).toEqual([0, 5, 15, 35]);
    expect(errors()).toHaveLength(3);
    expect(errors()[0]).toMatchObject({
      msg: "Reconciler error",
      controller: "test",
      namespace: "ns",
      name: "a",
    });
    expect(await value("controller_runtime_reconcile_errors_total")).toBe(3);
    // Success forgets the failures: the next failure starts at the base delay again.
    await controller.stop();
  });

  it("retries a not-found error with backoff, without an error log", async () => {
    let calls = 0;
    const { clock, controller, errors } = setup(async () => {
      if (++calls < 3) throw new NotFoundError("connection qm1 not found");
    });
    controller.enqueue(req);
    await advance(clock, 50, 1);
    expect(calls).toBe(3);
    expect(errors()).toHaveLength(0);
    await controller.stop();
  });

  it("survives a thrown programming error or non-error, counting it as a panic", async () => {
    const seen: string[] = [];
    const { clock, controller, value } = setup(async (r) => {
      seen.push(r.name);
      if (r.name === "a") throw new TypeError("cannot read properties of undefined");
      if (r.name === "b") throw "a bare string";
    });
    controller.enqueue(req);
    controller.enqueue({ ...req, name: "b" });
    controller.enqueue({ ...req, name: "c" });
    await advance(clock, 10, 1);
    expect(seen.slice(0, 3)).toEqual(["a", "b", "c"]);
    expect(await value("controller_runtime_reconcile_panics_total")).toBeGreaterThanOrEqual(2);
    await controller.stop();
  });

  it("gives up on a reconcile after the timeout, aborting its signal", async () => {
    let aborted = false;
    let calls = 0;
    const { clock, controller, errors } = setup(
      (_r, { signal }) =>
        new Promise(() => {
          calls++;
          signal.addEventListener("abort", () => (aborted = true));
        }),
    );
    controller.enqueue(req);
    await flush();
    await advance(clock, 59_000, 1000);
    expect(aborted).toBe(false);
    await advance(clock, 1000, 1000);
    expect(aborted).toBe(true);
    expect(errors()[0]?.err).toMatchObject({ type: "ReconcileTimeoutError" });
    // The abandoned reconcile never ends, so its key is never handed out again meanwhile.
    await advance(clock, 100, 1);
    expect(calls).toBe(1);
    await controller.stop(true);
  });

  it("retries a timed-out key once its abandoned reconcile has ended", async () => {
    let calls = 0;
    let finish = () => {};
    const { clock, controller } = setup(async () => {
      if (++calls === 1) await new Promise<void>((resolve) => (finish = resolve));
    });
    controller.enqueue(req);
    await flush();
    await advance(clock, 60_000, 1000);
    await advance(clock, 100, 1);
    expect(calls).toBe(1);
    finish();
    await flush();
    await advance(clock, 10, 1);
    expect(calls).toBe(2);
    await controller.stop();
  });

  it("frees the key of a reconcile that never ends one deadline after it was abandoned, and stops", async () => {
    let calls = 0;
    const { clock, controller, lines } = setup(
      () =>
        new Promise(() => {
          calls++;
        }),
    );
    controller.enqueue(req);
    await flush();
    await advance(clock, 60_000, 1000);
    // Abandoned, but its key stays busy for one more deadline.
    await advance(clock, 59_000, 1000);
    expect(calls).toBe(1);
    await advance(clock, 1_000, 1000);
    expect(
      lines.some((l) => String(l.msg).startsWith("a reconcile abandoned at its deadline still runs")),
    ).toBe(true);
    // Retried (a timeout is transient) once its key is free: the second one runs beside the stuck first.
    await advance(clock, 30_000, 1000);
    expect(calls).toBe(2);
    // A graceful stop does not wait for the stuck reconciles beyond their deadlines.
    const stopped = controller.stop();
    let done = false;
    void stopped.then(() => (done = true));
    await advance(clock, 120_000, 1000);
    expect(done).toBe(true);
  });

  it("reports the work in flight on the controller's clock", async () => {
    let finish = () => {};
    const { clock, controller, value } = setup(() => new Promise<void>((resolve) => (finish = resolve)));
    controller.enqueue(req);
    await flush();
    await advance(clock, 30_000, 1000);
    const labels = { controller: "test" };
    expect(await value("workqueue_unfinished_work_seconds", labels)).toBe(30);
    expect(await value("workqueue_longest_running_processor_seconds", labels)).toBe(30);
    finish();
    await flush();
    expect(await value("workqueue_unfinished_work_seconds", labels)).toBe(0);
    await controller.stop();
  });

  it("runs different keys in parallel but never the same key twice at once", async () => {
    let running = 0;
    let peak = 0;
    const perKey = new Map<string, number>();
    let overlap = false;
    const release: (() => void)[] = [];
    const { controller, value } = setup(async (r) => {
      running++;
      peak = Math.max(peak, running);
      perKey.set(r.name, (perKey.get(r.name) ?? 0) + 1);
      if (perKey.get(r.name)! > 1) overlap = true;
      await new Promise<void>((resolve) => release.push(resolve));
      perKey.set(r.name, perKey.get(r.name)! - 1);
      running--;
    }, 3);
    expect(await value("controller_runtime_max_concurrent_reconciles")).toBe(3);
    controller.enqueue(req);
    controller.enqueue({ ...req, name: "b" });
    await flush();
    controller.enqueue(req);
    await flush();
    expect(running).toBe(2);
    expect(await value("controller_runtime_active_workers")).toBe(2);
    while (release.length > 0) {
      release.shift()!();
      await flush();
    }
    expect(peak).toBe(2);
    expect(overlap).toBe(false);
    await controller.stop();
  });

  it("lets the reconcile in flight finish on stop", async () => {
    let finished = false;
    let release = () => {};
    const { controller } = setup(async () => {
      await new Promise<void>((resolve) => (release = resolve));
      finished = true;
    });
    controller.enqueue(req);
    await flush();
    const stopped = controller.stop();
    await flush();
    expect(finished).toBe(false);
    release();
    await stopped;
    expect(finished).toBe(true);
  });

  it("gives the event loop a turn between passes that await no I/O", async () => {
    // A restart's backlog answered from memory: a timer due meanwhile (the Lease's renewal) still runs.
    let passes = 0;
    const { controller } = setup(async () => void passes++, 2);
    for (let i = 0; i < 200; i++) controller.enqueue({ ...req, name: `o${i}` });
    const passesWhenTheTimerRan = await new Promise<number>((resolve) =>
      setTimeout(() => resolve(passes), 0),
    );
    expect(passesWhenTheTimerRan).toBeLessThan(200);
    for (let turns = 0; passes < 200 && turns < 1000; turns++) await flush();
    expect(passes).toBe(200);
    await controller.stop();
  });
});
