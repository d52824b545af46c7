import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../harness/fakes/fake-clock.ts";
import { EventRecorder } from "../port/events.ts";
import type { KubeRest } from "../port/kube-rest.ts";
import { RestKube } from "../port/rest-kube.ts";
import { LeaseFence } from "./lease-fence.ts";
import { FencedWriteError, openFence } from "../base/write-fence.ts";

const configMaps = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true };

/** A logger whose lines are kept, parsed. */
function capture() {
  const lines: { level: number; msg: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
      done();
    },
  });
  return { log: pino({ level: "debug" }, stream), lines };
}

function fence(clock: FakeClock, lapses: string[] = []) {
  const { log, lines } = capture();
  const f = new LeaseFence({ clock, holdMs: 10_000, log, onLapsed: () => lapses.push("lapsed") });
  return { fence: f, lines, lapses };
}

/** A KubeRest that records what goes out and answers every request with an empty object. */
function recordingRest() {
  const sent: string[] = [];
  const rest = {
    request: async (method: string, path: string) => {
      sent.push(`${method} ${path}`);
      return { metadata: { name: "x", namespace: "ns" } };
    },
  } as unknown as KubeRest;
  return { rest, sent };
}

const flushLogs = () => new Promise((resolve) => setImmediate(resolve));

describe("LeaseFence", () => {
  it("refuses every write before the first acquisition, without stepping down", () => {
    const clock = new FakeClock();
    const { fence: f, lapses } = fence(clock);
    expect(f.permits("a write")).toBe(false);
    expect(() => f.check("a write")).toThrow(FencedWriteError);
    expect(lapses).toEqual([]);
  });

  it("holds for the renew deadline from the start of the last successful attempt, by the monotonic clock", () => {
    const clock = new FakeClock();
    const { fence: f } = fence(clock);
    f.renewed(clock.monotonic());
    clock.advance(9_999);
    expect(f.holds()).toBe(true);
    f.renewed(clock.monotonic() - 500); // an attempt that started half a second ago succeeded
    clock.advance(9_499);
    expect(f.holds()).toBe(true);
    clock.advance(1);
    expect(f.holds()).toBe(false);
  });

  it("is blind to the wall clock: stepped back an hour it does not extend the hold, forward it does not cut it", () => {
    const clock = new FakeClock();
    const { fence: f } = fence(clock);
    f.renewed(clock.monotonic());
    clock.stepWall(3_600_000);
    expect(f.holds()).toBe(true);
    clock.stepWall(-7_200_000);
    clock.advance(10_000);
    expect(f.holds()).toBe(false);
  });

  it("refuses a write after a pause past the hold, logs that once and steps down once", async () => {
    const clock = new FakeClock();
    const { fence: f, lines, lapses } = fence(clock);
    f.renewed(clock.monotonic());
    expect(() => f.check("PATCH /api/v1/namespaces/ns/secrets/s")).not.toThrow();
    clock.advance(25_000); // SIGSTOP, a long GC: no renewal in between
    expect(() => f.check("PATCH /api/v1/namespaces/ns/secrets/s")).toThrow(FencedWriteError);
    expect(() => f.check("PUT /api/vhosts/v on the broker")).toThrow(FencedWriteError);
    expect(f.permits("an Event")).toBe(false);
    await flushLogs();
    expect(lapses).toEqual(["lapsed"]);
    const errors = lines.filter((l) => l.level >= 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      refused: "PATCH /api/v1/namespaces/ns/secrets/s",
      sinceRenewalMs: 25_000,
    });
  });

  it("refuses everything once revoked (released or lost), quietly", async () => {
    const clock = new FakeClock();
    const { fence: f, lines, lapses } = fence(clock);
    f.renewed(clock.monotonic());
    f.revoke();
    expect(f.permits("a write")).toBe(false);
    await flushLogs();
    expect(lapses).toEqual([]);
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
  });
});

describe("the fenced Kubernetes port", () => {
  it("sends reads whatever the fence says and no write it refuses", async () => {
    const clock = new FakeClock();
    const { fence: f } = fence(clock);
    const { rest, sent } = recordingRest();
    const kube = new RestKube(rest, { fence: f }).withSignal(new AbortController().signal);
    const object = { metadata: { name: "x", namespace: "ns", resourceVersion: "1", finalizers: ["f"] } };
    await kube.get(configMaps, { namespace: "ns", name: "x" });
    const writes = [
      () => kube.apply(configMaps, object),
      () => kube.create(configMaps, object),
      () => kube.patchStatus(configMaps, object, { phase: "Ready" }),
      () => kube.ensureFinalizer(configMaps, object, "g"),
      () => kube.removeFinalizer(configMaps, object, "f"),
      () => kube.patchMetadata(configMaps, object, { labels: { a: "b" } }),
      () => kube.delete(configMaps, { namespace: "ns", name: "x" }),
    ];
    for (const write of writes) await expect(write()).rejects.toThrow(FencedWriteError);
    expect(sent).toEqual(["GET /api/v1/namespaces/ns/configmaps/x"]);
    f.renewed(clock.monotonic());
    for (const write of writes) await write();
    expect(sent).toHaveLength(1 + writes.length);
  });

  it("is open without leader election", async () => {
    const { rest, sent } = recordingRest();
    await new RestKube(rest, { fence: openFence }).delete(configMaps, { namespace: "ns", name: "x" });
    expect(sent).toEqual(["DELETE /api/v1/namespaces/ns/configmaps/x"]);
  });
});

describe("the fenced event recorder", () => {
  it("drops an Event the fence refuses, and sends it while the hold lasts", async () => {
    const clock = new FakeClock();
    const { fence: f, log } = { ...fence(clock), ...capture() };
    const { rest, sent } = recordingRest();
    const recorder = new EventRecorder({ controller: "c", instance: "i", clock, log, fence: f });
    const spec = { type: "Normal" as const, reason: "Ready", action: "Ready", note: "" };
    const object = { metadata: { name: "x", namespace: "ns" } };
    await recorder.emit(rest, configMaps, object, spec);
    expect(sent).toEqual([]);
    f.renewed(clock.monotonic());
    await recorder.emit(rest, configMaps, object, spec);
    expect(sent).toEqual(["POST /apis/events.k8s.io/v1/namespaces/ns/events"]);
  });
});
