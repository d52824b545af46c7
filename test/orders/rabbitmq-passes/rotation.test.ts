// Rotation of the RabbitMQVhost order in whole passes on the fake Kubernetes port: on schedule or on a
// raised passwordGeneration, the successor named only once the delivered Secret carries it, the grace
// period, the sweep and its hold, and the backoff while the broker refuses the successor.
import { beforeEach, describe, expect, it } from "vitest";
import { permissionKind, rabbitMQVhostKind, secretKind, userKind } from "../../../src/api/index.ts";
import { BackupError } from "../../../src/backup/store.ts";
import { WAITING_FALLBACK_MS } from "../../../src/orders/core/requeue.ts";
import { NamespaceRotations } from "../../../src/orders/core/rotation-rate.ts";
import type { KubeObject } from "../../../src/runtime/port/kube-rest.ts";
import { TENANT, acceptSuccessor, clock, deps, events, kube, names, requeues, store } from "../pass-world.ts";
import {
  NAME,
  condition,
  converge,
  deliveredUser,
  order,
  pass,
  rotationReady,
  setUp,
  status,
  topology,
  world,
} from "./fixture.ts";

beforeEach(setUp);

describe("an order on the fake port", () => {
  it("rotates on schedule, keeps the old user for the grace period, then sweeps it", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    clock.advance(180_000);
    // The rotation is due and under way: its children's events wake it, the fallback is a backstop.
    expect(await pass()).toEqual({ requeueAfterMs: WAITING_FALLBACK_MS });
    expect(names(userKind)).toEqual([`${vhost}-vhost-user-v1`, `${vhost}-vhost-user-v2`]);
    expect(deliveredUser()).toBe(`${vhost}-v1`);
    topology();
    await pass();
    topology();
    // Switched: the grace period's end is the next deadline.
    expect(await pass()).toEqual({ requeueAfterMs: 60_000 });
    expect(status()).toMatchObject({ passwordGeneration: 2, previousPasswordGeneration: 1 });
    expect(deliveredUser()).toBe(`${vhost}-v2`);
    expect(events.map((e) => e.reason)).toContain("Rotated");

    clock.advance(60_000);
    // The sweep is under way: the removal of the old User wakes the order, the fallback is a backstop.
    expect(await pass()).toEqual({ requeueAfterMs: WAITING_FALLBACK_MS });
    expect(names(userKind)).toEqual([`${vhost}-vhost-user-v2`]);
    expect(names(permissionKind)).toEqual([`${vhost}-vhost-permission-v2`]);
    const result = await pass();
    expect(status()["previousPasswordGeneration"]).toBeUndefined();
    expect(kube.all(secretKind).filter((s) => s.metadata?.name?.includes("password-v1"))).toEqual([]);
    expect(result).toEqual({ requeueAfterMs: 120_000 });
  });

  it("forgets a rotation the namespace's bound holds back once its order is deleted", async () => {
    const rotations = new NamespaceRotations({ limit: 1, windowMs: 600_000 }, clock);
    deps.rotations = rotations;
    world();
    await converge();
    // Another order of the namespace took the bound's one rotation.
    expect(rotations.take(`/${TENANT}`, "other/2")).toBe(0);
    clock.advance(180_000);
    await pass();
    expect(names(userKind)).toHaveLength(1);
    expect(rotations.heldSince(`/${TENANT}`, NAME)).toBe(clock.now());
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    await pass();
    expect(rotations.heldSince(`/${TENANT}`, NAME)).toBeUndefined();
  });

  it("holds the sweep while connections use the superseded user, says so once, and sweeps when they go", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    const asked: string[] = [];
    let users = 2;
    const held = new Map<string, number | undefined>();
    deps.connections = async (username) => {
      asked.push(username);
      return { known: true, count: users };
    };
    deps.sweepHolds = { held: (o, n) => void held.set(`${o.namespace}/${o.name}`, n) };
    await rotationReady();
    await pass();
    expect(status()).toMatchObject({ passwordGeneration: 2, previousPasswordGeneration: 1 });
    // During the grace period nobody asks the broker.
    expect(asked).toEqual([]);
    clock.advance(60_000);
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(asked).toEqual([`${vhost}-v1`]);
    expect(names(userKind)).toEqual([`${vhost}-vhost-user-v1`, `${vhost}-vhost-user-v2`]);
    expect(condition("VhostReady")).toMatchObject({ status: "True", reason: "VhostProvisioned" });
    expect(condition("VhostReady")?.message).toContain(
      `the superseded user "${vhost}-v1" is kept past its grace period while 2 connections still use it`,
    );
    expect(held.get(`${TENANT}/${NAME}`)).toBe(2);
    clock.advance(10_000);
    await pass();
    expect(events.filter((e) => e.reason === "SweepHeld")).toHaveLength(1);
    users = 0;
    clock.advance(10_000);
    await pass();
    expect(names(userKind)).toEqual([`${vhost}-vhost-user-v2`]);
    expect(held.get(`${TENANT}/${NAME}`)).toBeUndefined();
    expect(condition("VhostReady")?.message).not.toContain("kept past its grace period");
  });

  it("sweeps at the end of the hold whoever still uses the superseded user", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    deps.connections = async () => ({ known: true, count: 1 });
    await rotationReady();
    await pass();
    clock.advance(60_000);
    await pass();
    expect(names(userKind)).toHaveLength(2);
    clock.advance(deps.settings.sweepHoldMs);
    await pass();
    expect(names(userKind)).toEqual([`${vhost}-vhost-user-v2`]);
  });

  it("keeps the delivered generation after a status wipe: nothing it carries goes, and it never goes back", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    await rotationReady();
    await pass();
    expect(deliveredUser()).toBe(`${vhost}-v2`);
    // A restore without status.
    const o = order();
    kube.put(rabbitMQVhostKind, { ...o, status: undefined } as never);
    await pass();
    expect(deliveredUser()).toBe(`${vhost}-v2`);
    expect(status()).toMatchObject({ passwordGeneration: 2, previousPasswordGeneration: 1 });
    expect(names(userKind)).toEqual([`${vhost}-vhost-user-v1`, `${vhost}-vhost-user-v2`]);
    // The predecessor gets a full grace period from the pass that found the Secret.
    expect(status()["previousPasswordDeleteAt"]).toBe(
      new Date(clock.now() + 60_000).toISOString().replace(".000Z", "Z"),
    );
    clock.advance(60_000);
    await pass();
    await pass();
    expect(names(userKind)).toEqual([`${vhost}-vhost-user-v2`]);
    expect(deliveredUser()).toBe(`${vhost}-v2`);
  });

  it("names the successor in the status only once the delivered Secret carries it, and starts the grace then", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    await rotationReady();
    store.failure = new BackupError("failed", "the write failed (test)");
    await pass();
    // Accepted by the broker, but the Secret still carries generation 1: so does the status.
    expect(status()).toMatchObject({ passwordGeneration: 1, username: `${vhost}-v1` });
    expect(status()["previousPasswordGeneration"]).toBeUndefined();
    expect(condition("DeliveryReady")?.reason).toBe("BackupNotSynced");
    expect(deliveredUser()).toBe(`${vhost}-v1`);
    clock.advance(600_000);
    expect(await pass()).toEqual({ requeueAfterMs: 10_000 });
    expect(names(userKind)).toContain(`${vhost}-vhost-user-v1`);
    expect(status()).toMatchObject({ passwordGeneration: 1, username: `${vhost}-v1` });
    expect(condition("VhostReady")?.message).toContain(
      `its successor user "${vhost}-v2" is Ready and takes over once the delivered Secret carries it`,
    );
    store.failure = undefined;
    expect(await pass()).toEqual({ requeueAfterMs: 60_000 });
    expect(deliveredUser()).toBe(`${vhost}-v2`);
    expect(status()["previousPasswordDeleteAt"]).toBe(
      new Date(clock.now() + 60_000).toISOString().replace(".000Z", "Z"),
    );
  });

  it("backs off from 10 s up to the transient cap while the broker refuses the successor", async () => {
    world();
    await converge();
    const vhost = status()["vhost"] as string;
    acceptSuccessor(false);
    await rotationReady();
    const waits: (number | undefined)[] = [];
    for (let i = 0; i < 4; i++) waits.push((await pass()).requeueAfterMs);
    expect(waits).toEqual([10_000, 20_000, 30_000, 30_000]);
    expect(deliveredUser()).toBe(`${vhost}-v1`);
    expect(condition("VhostReady")?.message).toContain("is not switched to yet");
    acceptSuccessor(true);
    expect(await pass()).toEqual({ requeueAfterMs: 60_000 });
    expect(deliveredUser()).toBe(`${vhost}-v2`);
    // A later refusal starts again at 10 s.
    expect(requeues.every((ms) => ms >= 1_000)).toBe(true);
  });

  it("raised passwordGeneration rotates at once", async () => {
    world();
    await converge();
    const raw = order() as KubeObject;
    kube.put(rabbitMQVhostKind, { ...raw, spec: { ...(raw["spec"] as object), passwordGeneration: 3 } });
    await pass();
    topology();
    await pass();
    topology();
    await pass();
    expect(status()["passwordGeneration"]).toBe(3);
  });
});
