import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../harness/fakes/fake-clock.ts";
import { EventRecorder } from "./events.ts";
import { KubeApiError, type KubeRest } from "./kube-rest.ts";

const configMaps = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true };
const spec = { type: "Normal" as const, reason: "Deleted", action: "Deleted", note: "" };
const object = { metadata: { name: "x", namespace: "ns" } };

/** A recorder whose POSTs fail with `error`, and the lines it logs. */
function refusing(error: Error) {
  const lines: { level: number; msg: string }[] = [];
  const log = pino(
    { level: "debug" },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
        done();
      },
    }),
  );
  const rest = { request: () => Promise.reject(error) } as unknown as KubeRest;
  const recorder = new EventRecorder({ controller: "c", instance: "i", clock: new FakeClock(), log });
  return { rest, recorder, lines };
}

describe("EventRecorder", () => {
  it("drops an Event of a namespace being deleted quietly, and warns of any other refusal", async () => {
    const terminating = refusing(
      new KubeApiError(
        "POST",
        "/apis/events.k8s.io/v1/namespaces/ns/events",
        403,
        "Forbidden",
        'events.events.k8s.io "x.1" is forbidden: unable to create new content in namespace ns because it is being terminated',
      ),
    );
    await terminating.recorder.emit(terminating.rest, configMaps, object, spec);
    expect(terminating.lines.map((l) => [l.level, l.msg])).toEqual([
      [20, "no event: its namespace is being deleted"],
    ]);

    const refused = refusing(
      new KubeApiError("POST", "/apis/events.k8s.io/v1/namespaces/ns/events", 403, "Forbidden", "no"),
    );
    await refused.recorder.emit(refused.rest, configMaps, object, spec);
    expect(refused.lines.map((l) => [l.level, l.msg])).toEqual([[40, "could not record an event"]]);
  });

  it("reports as its controller and instance (main.ts: the pod's name)", async () => {
    const posted: unknown[] = [];
    const rest = {
      request: (_method: string, _path: string, options: { body: unknown }) => {
        posted.push(options.body);
        return Promise.resolve();
      },
    } as unknown as KubeRest;
    const recorder = new EventRecorder({
      controller: "c5c3.io/vhost-broker",
      instance: "vb-vhost-broker-7d9c-x2x4q",
      clock: new FakeClock(),
      log: pino({ level: "silent" }),
    });
    await recorder.emit(rest, configMaps, object, spec);
    expect(posted).toEqual([
      expect.objectContaining({
        reportingController: "c5c3.io/vhost-broker",
        reportingInstance: "vb-vhost-broker-7d9c-x2x4q",
      }),
    ]);
  });
});
