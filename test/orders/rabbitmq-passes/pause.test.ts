// A paused order (annotation c5c3.io/paused: "true") in whole passes on the fake port: no rotation while
// it is paused, the resource condition says so, the rotation follows once the annotation goes, and a
// paused order is still torn down when deleted.
import { beforeEach, describe, expect, it } from "vitest";
import { rabbitMQVhostKind, userKind } from "../../../src/api/index.ts";
import { PAUSED_ANNOTATION } from "../../../src/api/contracts.ts";
import { TENANT, clock, kube } from "../pass-world.ts";
import {
  NAME,
  condition,
  converge,
  deliveredUser,
  order,
  pass,
  setUp,
  status,
  topology,
  world,
} from "./fixture.ts";

beforeEach(setUp);

function annotate(value: string | undefined): void {
  const o = order();
  const annotations = { ...o?.metadata?.annotations };
  if (value === undefined) delete annotations[PAUSED_ANNOTATION];
  else annotations[PAUSED_ANNOTATION] = value;
  kube.put(rabbitMQVhostKind, { ...o, metadata: { ...o?.metadata, annotations } });
}

describe("a paused RabbitMQVhost", () => {
  it("is not rotated while paused, says so, and rotates once resumed", async () => {
    world();
    await converge();
    const said = condition("VhostReady")?.message ?? "";
    annotate("true");
    clock.advance(10 * 60_000);
    for (let i = 0; i < 3; i++) {
      expect(await pass()).toEqual({});
      topology();
    }
    expect(status()["passwordGeneration"]).toBe(1);
    expect(kube.all(userKind)).toHaveLength(1);
    expect(condition("VhostReady")).toMatchObject({ status: "True", reason: "VhostProvisioned" });
    expect(condition("VhostReady")?.message).toBe(
      `${said}; paused by the annotation ${PAUSED_ANNOTATION}: nothing is provisioned, rotated, swept or delivered until it is removed`,
    );
    annotate(undefined);
    for (let i = 0; i < 4; i++) {
      await pass();
      topology();
    }
    expect(deliveredUser()).toMatch(/-v2$/);
    expect(condition("VhostReady")?.message).not.toContain("paused");
  });

  it("is torn down when deleted", async () => {
    world();
    await converge();
    annotate("true");
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    expect(await pass()).toEqual({});
    expect(order()).toBeUndefined();
    expect(kube.all(userKind)).toEqual([]);
  });
});
