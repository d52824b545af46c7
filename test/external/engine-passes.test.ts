// Whole passes of the one engine of resources outside Kubernetes, on the in-memory port, for both
// backends alike: a Vhost on the fake broker and a SQL Database on a server stand-in go through the
// same claim, memo, refusal backoff, status write, Events and teardown. What differs is what each
// backend names its failure reason.
import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { sqlDatabaseKind, vhostKind, type KindRef } from "../../src/api/index.ts";
import type { TransitionEvents } from "../../src/external/index.ts";
import type { Result } from "../../src/runtime/loop/controller.ts";
import { TransientError } from "../../src/runtime/base/errors.ts";
import { createSharedSqlDeps, sqlReconcileDeps, sqlKind } from "../../src/sql/index.ts";
import { reconcileExternal } from "../../src/external/index.ts";
import { FakeClock } from "../../harness/fakes/fake-clock.ts";
import { FakeKube } from "../../harness/fakes/fake-kube.ts";
import { DatabaseServer } from "../sql/database-server.ts";
import { newPass, putManagedBus, readyOf, reconcileKind, ref, settings } from "../topology/pass-support.ts";

const name = "o";

/** What the engine's Events were asked to record: each transition's type and Ready reason, each teardown step. */
class RecordedEvents implements TransitionEvents {
  readonly transitions: { type: string; reason: string }[] = [];
  readonly steps: string[] = [];

  /** As the recorder does, only a Ready whose status or reason changed counts. */
  record(...[, , before, after, type]: Parameters<TransitionEvents["record"]>): void {
    const was = before?.find((c) => c.type === "Ready");
    const ready = after.find((c) => c.type === "Ready");
    if (type === "none" || !ready || (was?.status === ready.status && was.reason === ready.reason)) return;
    this.transitions.push({
      type: type ?? (ready.status === "True" ? "Normal" : "Warning"),
      reason: ready.reason,
    });
  }

  teardown(...[, , reason]: Parameters<TransitionEvents["teardown"]>): void {
    this.steps.push(reason);
  }
}

interface World {
  kind: KindRef;
  namespace: string;
  finalizer: string;
  /** Ready's reason when the endpoint refuses. */
  failedReason: string;
  clock: FakeClock;
  kube: FakeKube;
  events: RecordedEvents;
  put(): void;
  reconcile(): Promise<Result>;
  /** Requests the endpoint got so far. */
  sent(): number;
  refuse(): void;
  allow(): void;
}

function brokerWorld(): World {
  const { clock, kube, broker, deps } = newPass();
  putManagedBus(kube);
  const events = new RecordedEvents();
  const namespace = "app";
  return {
    kind: vhostKind,
    namespace,
    finalizer: "deletion.finalizers.vhosts.rabbitmq.com",
    failedReason: "FailedCreateOrUpdate",
    clock,
    kube,
    events,
    put: () => kube.put(vhostKind, { metadata: { name, namespace }, spec: { name: "v1", ...ref } }),
    reconcile: () => reconcileKind({ ...deps, events }, vhostKind, name),
    sent: () => broker.requests.length,
    refuse: () => broker.refuse("/api/vhosts/v1", 400, "inequivalent arg 'x'"),
    allow: () => broker.allow("/api/vhosts/v1"),
  };
}

function serverWorld(): World {
  const clock = new FakeClock();
  const kube = new FakeKube({ now: () => new Date(clock.now()) });
  const server = new DatabaseServer();
  const events = new RecordedEvents();
  const shared = createSharedSqlDeps({ server, refs: { serve: "all" }, settings, clock, events });
  const deps = sqlReconcileDeps(shared, kube, pino({ level: "silent" }));
  const namespace = "openstack";
  return {
    kind: sqlDatabaseKind,
    namespace,
    finalizer: "mariadb.osh.openstack.org/database-cleanup",
    failedReason: "ReconcileError",
    clock,
    kube,
    events,
    put: () =>
      kube.put(sqlDatabaseKind, {
        metadata: { name, namespace },
        spec: { mariaDbRef: { name: "mariadb" }, name: "o_db", cleanupPolicy: "Delete" },
      }),
    reconcile: () => reconcileExternal(sqlKind.database, deps, namespace, name),
    sent: () => server.sent.length,
    refuse: () => {
      server.refusing = true;
    },
    allow: () => {
      server.refusing = false;
    },
  };
}

const stored = (world: World) => world.kube.read(world.kind, world.namespace, name);

describe.each([
  ["a Vhost on a broker", brokerWorld],
  ["a SQL Database on a server", serverWorld],
])("the engine's pass of %s", (_, make) => {
  it("claims and applies in one pass, then sends and writes nothing until the verification is due", async () => {
    const world = make();
    world.put();
    expect(await world.reconcile()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    expect(stored(world)?.metadata?.finalizers).toEqual([world.finalizer]);
    expect(readyOf(stored(world))).toMatchObject({ status: "True" });
    expect(world.events.transitions).toEqual([{ type: "Normal", reason: expect.any(String) }]);
    const sent = world.sent();
    const writes = world.kube.writes().length;

    // The memo vouches for the state: nothing is sent, nothing written.
    world.clock.advance(10_000);
    expect(await world.reconcile()).toEqual({ requeueAfterMs: settings.verificationPeriodMs - 10_000 });
    expect(world.sent()).toBe(sent);
    expect(world.kube.writes()).toHaveLength(writes);

    // Due: the endpoint is asked again. Its answer may reword Ready once (SQL's "is up to date"), and a
    // verification that finds nothing new writes nothing and records no Event.
    for (let i = 0; i < 2; i++) {
      world.clock.advance(settings.verificationPeriodMs);
      const verified = world.sent();
      expect(await world.reconcile()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
      expect(world.sent()).toBeGreaterThan(verified);
    }
    const settled = world.kube.writes().length;
    world.clock.advance(settings.verificationPeriodMs);
    await world.reconcile();
    expect(world.kube.writes()).toHaveLength(settled);
    expect(world.events.transitions).toHaveLength(1);
  });

  it("keeps its verification deadline when the wall clock steps, either way", async () => {
    const world = make();
    world.put();
    await world.reconcile();
    const sent = world.sent();

    // A step forward by more than the period does not make the verification due ...
    world.clock.stepWall(2 * settings.verificationPeriodMs);
    world.clock.advance(10_000);
    expect(await world.reconcile()).toEqual({ requeueAfterMs: settings.verificationPeriodMs - 10_000 });
    expect(world.sent()).toBe(sent);

    // ... and a step back does not put it off: it is due a period after the last confirmation.
    world.clock.stepWall(-4 * settings.verificationPeriodMs);
    world.clock.advance(settings.verificationPeriodMs - 10_000);
    expect(await world.reconcile()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    expect(world.sent()).toBeGreaterThan(sent);
  });

  it("makes a status write that was lost after the endpoint took the state, without a request", async () => {
    const world = make();
    world.put();
    world.kube.failNext("patchStatus", world.kind, new Error("the API server went away"));
    await expect(world.reconcile()).rejects.toThrow("went away");
    expect(readyOf(stored(world))).toBeUndefined();
    const sent = world.sent();
    expect(await world.reconcile()).toEqual({ requeueAfterMs: settings.verificationPeriodMs });
    expect(readyOf(stored(world))).toMatchObject({ status: "True" });
    expect(world.sent()).toBe(sent);
  });

  it("backs a refusal off, doubling per refusal in a row, with one Warning Event", async () => {
    const world = make();
    world.put();
    world.refuse();
    const retries: number[] = [];
    for (let i = 0; i < 3; i++) {
      const error = await world.reconcile().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TransientError);
      retries.push((error as TransientError).retryAfterMs ?? 0);
    }
    const wait = settings.waitingRetryMs;
    expect(retries).toEqual([wait, 2 * wait, 4 * wait]);
    expect(readyOf(stored(world))).toMatchObject({ status: "False", reason: world.failedReason });
    expect(world.events.transitions).toEqual([{ type: "Warning", reason: world.failedReason }]);
  });

  it("tears a deleted object down in one pass: the endpoint, the finalizer released, one Deleted Event", async () => {
    const world = make();
    world.put();
    await world.reconcile();
    const sent = world.sent();
    await world.kube.delete(world.kind, { namespace: world.namespace, name });
    expect(await world.reconcile()).toEqual({});
    expect(world.sent()).toBeGreaterThan(sent);
    expect(stored(world)).toBeUndefined();
    expect(world.events.steps).toEqual(["Deleted"]);
    await world.reconcile();
    expect(world.events.steps).toEqual(["Deleted"]);
  });

  it("says Deleting once while a teardown waits for a refusing endpoint, then Deleted on the release", async () => {
    const world = make();
    world.put();
    await world.reconcile();
    world.refuse();
    await world.kube.delete(world.kind, { namespace: world.namespace, name });
    await expect(world.reconcile()).rejects.toThrow(TransientError);
    await expect(world.reconcile()).rejects.toThrow(TransientError);
    expect(stored(world)?.metadata?.finalizers).toContain(world.finalizer);
    expect(world.events.steps).toEqual(["Deleting"]);
    world.allow();
    expect(await world.reconcile()).toEqual({});
    expect(stored(world)).toBeUndefined();
    expect(world.events.steps).toEqual(["Deleting", "Deleted"]);
  });
});
