// The order reconciler's passes through the gatekeeper, on the fake port with a fake clock: a rejection
// (GatekeeperRejected, nothing provisioned, backoff), exits after a reconcile error, a teardown no plugin
// can veto, rotation-policy's clamp on the schedule, and passes with the default configuration writing
// exactly what passes without a gatekeeper write.
import { beforeEach, describe, expect, it } from "vitest";
import { permissionKind, rabbitMQVhostKind, secretKind, userKind, vhostKind } from "../../src/api/index.ts";
import { GATEKEEPER_API_VERSION, type GatekeeperPlugin } from "../../src/gatekeeper/api.ts";
import { Gatekeeper } from "../../src/gatekeeper/gatekeeper.ts";
import { defaultPlugins, loadPlugins } from "../../src/gatekeeper/loader.ts";
import type { OrderDeps, OrderEvent } from "../../src/orders/core/deps.ts";
import { reconcileOrder } from "../../src/orders/core/reconcile.ts";
import { SuccessorBackoff } from "../../src/orders/core/requeue.ts";
import { rabbitMQVhostOrder } from "../../src/orders/rabbitmq/kind.ts";
import { TransientError } from "../../src/runtime/base/errors.ts";
import { FakeClock } from "../../harness/fakes/fake-clock.ts";
import { FakeKube, apiError } from "../../harness/fakes/fake-kube.ts";
import { putManagedBus } from "../../harness/fakes/managed-bus.ts";
import { topologyFinalizer } from "../../src/rabbitmq/finalizer.ts";
import { MemoryStore } from "../../harness/fakes/memory-store.ts";
import { RecordingLog, recorder } from "./support.ts";

const TENANT = "tenant-a";
const CP_NS = "openstack";
const NAME = "workflow";

let clock: FakeClock;
let kube: FakeKube;
let events: OrderEvent[];

function world(rotation: Record<string, string> = { interval: "3m", gracePeriod: "1m" }) {
  putManagedBus(kube, CP_NS, TENANT);
  kube.put(rabbitMQVhostKind, {
    metadata: { name: NAME, namespace: TENANT, uid: "order-uid" },
    spec: { controlPlaneRef: { name: "cp", namespace: CP_NS }, rotation },
  });
}

function depsWith(gatekeeper: Gatekeeper | undefined): OrderDeps {
  const log = new RecordingLog();
  return {
    management: kube,
    home: kube,
    store: new MemoryStore(),
    clock,
    log,
    events: { emit: (_target, event) => void events.push(event) },
    settings: { brokerCheckTimeoutMs: 1_000, transientCapMs: 30_000, sweepHoldMs: 60_000 },
    backoff: new SuccessorBackoff(),
    connections: async () => ({ known: true, count: 0 }),
    strayAccounts: async () => ({ removed: [] }),
    successorCheck: async () => ({ accepted: true }),
    gatekeeper,
  };
}

async function pass(
  deps: OrderDeps,
): Promise<{ requeueAfterMs?: number | undefined; error?: TransientError }> {
  try {
    return await reconcileOrder(rabbitMQVhostOrder(), deps, "", TENANT, NAME);
  } catch (error) {
    if (!(error instanceof TransientError)) throw error;
    return { error };
  }
}

/** The topology operator's part: every child reported Ready. */
function topology(): void {
  for (const kind of [vhostKind, userKind, permissionKind]) {
    for (const object of kube.all(kind)) {
      if (object.metadata?.deletionTimestamp) continue;
      kube.put(kind, {
        ...object,
        status: {
          observedGeneration: object.metadata?.generation ?? 1,
          conditions: [{ type: "Ready", status: "True", reason: "SuccessfulCreateOrUpdate" }],
        },
      });
    }
  }
}

const order = () => kube.read(rabbitMQVhostKind, TENANT, NAME);
const status = () => (order()?.status ?? {}) as Record<string, unknown>;
const condition = (type: string) =>
  (
    status()["conditions"] as { type: string; status: string; reason: string; message: string }[] | undefined
  )?.find((c) => c.type === type);

async function converge(deps: OrderDeps): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await pass(deps);
    topology();
    if (condition("Ready")?.status === "True") return;
  }
  throw new Error(`did not converge: ${JSON.stringify(status()["conditions"])}`);
}

const refusing = (calls: string[]): GatekeeperPlugin => ({
  apiVersion: GATEKEEPER_API_VERSION,
  name: "refuser",
  validating: {
    RabbitMQVhost: {
      entry() {
        calls.push("refuser:entry");
        throw new Error("namespace tenant-a is over its quota");
      },
      exit: (context) => void calls.push(`refuser:exit:${context.outcome}`),
    },
  },
});

const gatekeeperOf = (custom: GatekeeperPlugin[], defaults: GatekeeperPlugin[] = []) =>
  new Gatekeeper({
    plugins: { mandatory: [], default: defaults, custom },
    log: new RecordingLog(),
    clock,
    backoff: { baseMs: 1_000, capMs: 30_000 },
  });

beforeEach(() => {
  clock = new FakeClock(Date.parse("2030-01-01T00:00:00Z"));
  kube = new FakeKube({ now: () => new Date(clock.now()) });
  // The topology controller, which this world does not run, releases the children's finalizer.
  kube.releaseOnDelete(...[vhostKind, userKind, permissionKind].map(topologyFinalizer));
  events = [];
});

describe("a rejected order", () => {
  it("reads Ready False GatekeeperRejected naming the plugin, gets nothing provisioned, and backs off", async () => {
    world();
    const calls: string[] = [];
    const deps = depsWith(gatekeeperOf([refusing(calls)]));
    const first = await pass(deps);
    expect(first.error?.message).toBe(
      'gatekeeper plugin "refuser" rejected this RabbitMQVhost: namespace tenant-a is over its quota',
    );
    expect(first.error?.retryAfterMs).toBe(1_000);
    expect(condition("Ready")).toMatchObject({ status: "False", reason: "GatekeeperRejected" });
    expect(condition("Ready")?.message).toContain('"refuser"');
    expect(condition("VhostReady")).toMatchObject({ status: "False", reason: "GatekeeperRejected" });
    expect(condition("DeliveryReady")).toMatchObject({ status: "False", reason: "WaitingForPassword" });
    expect(order()?.metadata?.finalizers ?? []).toEqual([]);
    expect(kube.all(vhostKind)).toEqual([]);
    expect(events).toContainEqual(expect.objectContaining({ type: "Warning", reason: "GatekeeperRejected" }));
    expect(calls).toEqual(["refuser:entry", "refuser:exit:rejected"]);
    const writes = kube.writes().length;
    expect((await pass(deps)).error?.retryAfterMs).toBe(2_000);
    // The same rejection again changes nothing.
    expect(kube.writes().length).toBe(writes);
  });

  it("an order that was Ready keeps its resource condition and its Secret, and Ready says why", async () => {
    world();
    await converge(depsWith(undefined));
    const calls: string[] = [];
    const outcome = await pass(depsWith(gatekeeperOf([refusing(calls)])));
    expect(outcome.error).toBeInstanceOf(TransientError);
    expect(condition("Ready")).toMatchObject({ status: "False", reason: "GatekeeperRejected" });
    expect(condition("VhostReady")).toMatchObject({ status: "True" });
    expect(condition("DeliveryReady")).toMatchObject({ status: "True" });
    expect(kube.read(secretKind, TENANT, `${NAME}-credentials`)).toBeDefined();
  });
});

describe("exit hooks", () => {
  it("run after a reconcile error, which stays the pass's error", async () => {
    world();
    const calls: string[] = [];
    const deps = depsWith(gatekeeperOf([recorder("watcher", calls)]));
    kube.failNext("ensureFinalizer", rabbitMQVhostKind, apiError(500, "InternalError"));
    const outcome = await pass(deps);
    expect(outcome.error?.message).toMatch(/adding the finalizer .* failed/);
    expect(calls).toEqual(["watcher:entry", "watcher:exit:failed"]);
  });

  it("run on a teardown, whose entry no plugin can veto", async () => {
    world();
    await converge(depsWith(undefined));
    await kube.delete(rabbitMQVhostKind, { namespace: TENANT, name: NAME });
    const calls: string[] = [];
    const deps = depsWith(gatekeeperOf([refusing(calls)]));
    for (let i = 0; i < 5 && order(); i++) await pass(deps);
    expect(order()).toBeUndefined();
    expect(kube.all(userKind)).toEqual([]);
    expect(calls.slice(0, 2)).toEqual(["refuser:entry", "refuser:exit:succeeded"]);
  });
});

describe("rotation-policy", () => {
  it("clamps a 1-year interval to the platform maximum for the pass, says so, and rotates on that schedule", async () => {
    world({ interval: "8760h", gracePeriod: "24h" });
    const log = new RecordingLog();
    const plugins = await loadPlugins({
      entries: { default: ["rotation-policy"], custom: [] },
      context: () => ({
        kube,
        kubernetesVersion: "v1.37.2",
        log,
        clock,
        env: {
          VHOST_BROKER_ROTATION_POLICY_MAX_INTERVAL: "20s",
          VHOST_BROKER_ROTATION_POLICY_MAX_GRACE_PERIOD: "5s",
        },
      }),
    });
    const deps = depsWith(new Gatekeeper({ plugins, log, clock }));
    await converge(deps);
    const s = status();
    expect(Date.parse(s["nextRotation"] as string) - Date.parse(s["lastRotation"] as string)).toBe(20_000);
    expect(condition("RotationPolicyApplied")).toMatchObject({
      status: "True",
      reason: "Clamped",
      message:
        "the platform's rotation policy applies to this order: interval 8760h is 20s; gracePeriod 24h is 5s",
    });
    // The tenant's spec is never written back.
    expect(order()?.["spec"]).toMatchObject({ rotation: { interval: "8760h", gracePeriod: "24h" } });
    const writes = kube.writes().length;
    await pass(deps);
    expect(kube.writes().length).toBe(writes);
    clock.advance(20_000);
    for (let i = 0; i < 6 && status()["passwordGeneration"] !== 2; i++) {
      await pass(deps);
      topology();
    }
    expect(status()["passwordGeneration"]).toBe(2);
    expect(
      Date.parse(status()["previousPasswordDeleteAt"] as string) -
        Date.parse(status()["lastRotation"] as string),
    ).toBe(5_000);
  });
});

it("with the default configuration (and with no plugins), writes the same statuses and events as without a gatekeeper", async () => {
  const run = async (gatekeeper: Gatekeeper | undefined) => {
    clock = new FakeClock(Date.parse("2030-01-01T00:00:00Z"));
    kube = new FakeKube({ now: () => new Date(clock.now()) });
    events = [];
    world();
    const deps = depsWith(gatekeeper);
    await converge(deps);
    clock.advance(180_000);
    for (let i = 0; i < 4; i++) {
      await pass(deps);
      topology();
    }
    clock.advance(60_000);
    await pass(deps);
    return { writes: kube.writes(), status: order()?.status, events };
  };
  const log = new RecordingLog();
  const defaults = await loadPlugins({
    entries: { default: [...defaultPlugins], custom: [] },
    context: () => ({ kube, kubernetesVersion: "v1.37.2", log, clock, env: {} }),
  });
  const today = await run(undefined);
  expect(today.events.map((e) => e.reason)).toContain("Rotated");
  expect(await run(Gatekeeper.empty(log, clock))).toEqual(today);
  expect(await run(new Gatekeeper({ plugins: defaults, log, clock }))).toEqual(today);
});
