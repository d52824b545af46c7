// Faults in the evidence the rotation decides from, through the operator process on the real parts (the
// built-in topology controller on the local broker, OpenBao, the API server), with two replicas under
// leader election at the default timings:
// - the live generation's User child lost (its finalizer stripped) during the grace period of the one
//   before: the sweep must not remove the broker user the delivered Secret carries, and a successor
//   replaces it;
// - the order deleted while that lost generation is in its grace period: nothing of it stays on the
//   broker;
// - a tenant edits the delivered Secret (a username of a later generation, before and during a grace
//   period) or re-applies an older copy after two rotations: the operator's own records outrank it, the
//   Secret is repaired, and no user in its grace period is deleted early;
// - a tenant marks the delivered Secret immutable: the next rotation replaces it and says so;
// - the ControlPlane's own controller writes its status: no order of that ControlPlane passes for it;
// - a tenant raises spec.passwordGeneration in a loop with gracePeriod 0s: the namespace's bound on
//   rotations holds the raise past it, its delivered user valid meanwhile;
// - an order whose finalizer was stripped comes back, and is lost again later: its leftovers wait the
//   whole --orphan-removal-delay again.
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseMetrics, sum } from "../harness/probes/prometheus.ts";
import { userChildName, userName } from "../src/orders/rabbitmq/naming.ts";
import { eventually } from "../harness/world/kube.ts";
import { amqpLogin, LoginProber } from "../harness/probes/login-prober.ts";
import { holdOperatorLock, releaseOperatorLock } from "../harness/operator/operator-process.ts";
import { ReplicaPair } from "../harness/operator/replica-pair.ts";
import { scratchFolder } from "../harness/world/scratch.ts";
import {
  applyOrder,
  brokerApi,
  childNames,
  condition,
  createWorld,
  destroyWorld,
  isReady,
  readOrder,
  readSecret,
  waitForOrder,
  worldEvents,
  type World,
} from "../harness/world/world.ts";
import type { RabbitMQVhost } from "../src/api/index.ts";

/** A consumer that keeps the credentials it read once and logs in with them every second. */
class FixedConsumer {
  readonly refusals: string[] = [];
  logins = 0;
  private attempts = 0;
  private stopped = false;
  private readonly loop: Promise<void>;
  constructor(transportUrl: string) {
    this.loop = (async () => {
      while (!this.stopped) {
        const outcome = await amqpLogin(transportUrl);
        if (outcome.kind === "ok") this.logins++;
        else this.refusals.push(outcome.message);
        this.attempts++;
        await new Promise((r) => setTimeout(r, 1_000));
      }
    })();
  }
  /** Stops after one more attempt, so the last login is later than every check made before. */
  async stop(): Promise<void> {
    const seen = this.attempts;
    while (this.attempts === seen) await new Promise((r) => setTimeout(r, 100));
    this.stopped = true;
    await this.loop;
  }
}

describe("faults in the rotation's evidence, operator process", () => {
  let world: World | undefined;
  const w = (): World => {
    if (!world) throw new Error("no world");
    return world;
  };
  const key = (name: string) => ({ cluster: "", namespace: w().tenantNs, name });
  const delivered = (name: string) => readSecret(w(), w().tenantNs, `${name}-credentials`);
  const onBroker = async (user: string) =>
    (await brokerApi(w(), "GET", `/api/users/${encodeURIComponent(user)}`)).status === 200;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
  const mergePatch = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
  /** Replaces keys of the delivered Secret, as a tenant's `kubectl edit` or re-applied copy does. */
  const editDelivered = async (name: string, data: Record<string, string>) => {
    const encoded = Object.fromEntries(
      Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")]),
    );
    await w().cluster.core.patchNamespacedSecret(
      { namespace: w().tenantNs, name: `${name}-credentials`, body: { data: encoded } },
      mergePatch,
    );
  };
  const spec = (passwordGeneration: number, gracePeriod: string) => ({
    passwordGeneration,
    rotation: { interval: "0s", gracePeriod },
    deletionPolicy: "Delete",
  });

  const logs = scratchFolder("vb-evidence-faults-", "evidence-faults: the replicas' logs");
  const lease = `vb-evfault-${Date.now().toString(36)}`;
  // A bound on rotations per namespace the other tests stay under (their rotations are a grace apart).
  const ROTATION_WINDOW_MS = 30_000;
  const ORPHAN_DELAY_MS = 15_000;
  const replicas = new ReplicaPair({
    lease,
    workdir: logs.path,
    options: () => ({
      args: [
        "--namespace-rotation-limit=2",
        `--namespace-rotation-window=${ROTATION_WINDOW_MS / 1000}s`,
        `--orphan-removal-delay=${ORPHAN_DELAY_MS / 1000}s`,
      ],
    }),
    log: () => undefined,
  });

  /**
   * Runs `fault` with the leader stopped (SIGSTOP, a second or two, well inside its Lease): a finalizer
   * stripped while it runs would be put back by its next pass before the delete that follows.
   */
  const leaderFrozen = async (fault: () => Promise<void>) => {
    const pid = (await replicas.leading()).pid ?? 0;
    process.kill(pid, "SIGSTOP");
    try {
      await fault();
    } finally {
      process.kill(pid, "SIGCONT");
    }
  };

  type ObjectRef = { group: string; version: string; plural: string; namespace: string; name: string };
  /** Strips the object's finalizers and deletes it, the leader frozen meanwhile: nothing lets go of it. */
  const lose = (ref: ObjectRef) =>
    leaderFrozen(async () => {
      await w().custom.patchNamespacedCustomObject(
        { ...ref, body: { metadata: { finalizers: null } } },
        mergePatch,
      );
      await w().custom.deleteNamespacedCustomObject(ref);
    });
  /** Generation N's User child of the order `name`. */
  const userChild = (name: string, generation: number): ObjectRef => ({
    group: "rabbitmq.com",
    version: "v1beta1",
    plural: "users",
    namespace: w().cpNs,
    name: userChildName(key(name), generation),
  });

  beforeAll(async () => {
    world = await createWorld("evfault");
    await holdOperatorLock();
    await replicas.startBoth();
    await replicas.leader();
  }, 120_000);

  afterAll(async () => {
    try {
      await destroyWorld(world);
    } finally {
      await replicas.stopBoth();
      await world?.cluster.config
        .makeApiClient(k8s.CoordinationV1Api)
        .deleteNamespacedLease({ name: lease, namespace: "default" })
        .catch(() => undefined);
      releaseOperatorLock();
      logs.release();
    }
  }, 120_000);

  it("keeps the delivered user when its User child is lost during a grace period, and replaces it", async () => {
    const name = "lostlive";
    await applyOrder(w(), name, spec(1, "20s"));
    await waitForOrder(w(), name, "generation 1", (o) => isReady(o), 90_000);
    const prober = new LoginProber({
      core: w().cluster.core,
      namespace: w().tenantNs,
      order: name,
      intervalMs: 1_000,
    });
    prober.start();
    try {
      await applyOrder(w(), name, spec(2, "20s"));
      await waitForOrder(
        w(),
        name,
        "generation 2 in generation 1's grace period",
        (o) => o?.status?.passwordGeneration === 2 && o.status.previousPasswordDeleteAt !== undefined,
        60_000,
      );
      // The live User's finalizer stripped and the User deleted: the broker user stays behind.
      await lose(userChild(name, 2));
      await sleep(2_000);
      expect(await onBroker(userName(key(name), 2))).toBe(true);
      expect(await childNames(w(), name, "users")).not.toContain(userChildName(key(name), 2));

      // Generation 1 is swept after its grace; a successor replaces the lost one.
      const replaced = await waitForOrder(
        w(),
        name,
        "generation 3 delivered in place of the one whose User was lost",
        (o) => o?.status?.passwordGeneration === 3 && isReady(o),
        120_000,
      );
      expect(replaced?.status?.previousPasswordGeneration).toBe(2);
      expect(await onBroker(userName(key(name), 1))).toBe(false);
      expect((await delivered(name))["username"]).toBe(userName(key(name), 3));
      // The lost generation's broker user goes once its own grace period is over.
      await eventually(
        "the broker user of the lost generation removed after its grace period",
        async () => ((await onBroker(userName(key(name), 2))) ? undefined : true),
        90_000,
      );
      expect(await onBroker(userName(key(name), 3))).toBe(true);
      await sleep(2_000);
    } finally {
      await prober.stop();
    }
    console.log(prober.summary());
    const counts = prober.snapshot();
    expect(counts.authFailures).toBe(0);
    expect(counts.otherFailures).toBe(0);
    expect(counts.successes).toBeGreaterThan(20);
    expect(counts.usernamesSeen).toEqual([
      userName(key(name), 1),
      userName(key(name), 2),
      userName(key(name), 3),
    ]);
  }, 300_000);

  it("leaves no user behind when the order is deleted while its lost generation is in its grace period", async () => {
    const name = "lostgone";
    const prefix = `${userName(key(name), 1).slice(0, -1)}`;
    const orderUsers = async () =>
      ((await (await brokerApi(w(), "GET", "/api/users")).json()) as { name: string }[])
        .map((u) => u.name)
        .filter((n) => n.startsWith(prefix))
        .sort();
    await applyOrder(w(), name, spec(1, "10s"));
    await waitForOrder(w(), name, "generation 1", (o) => isReady(o), 90_000);
    await applyOrder(w(), name, spec(2, "10s"));
    await waitForOrder(w(), name, "generation 2", (o) => o?.status?.passwordGeneration === 2, 60_000);
    await lose(userChild(name, 2));
    await waitForOrder(
      w(),
      name,
      "generation 3 delivered, the lost generation 2 in its grace period",
      (o) => o?.status?.passwordGeneration === 3 && o.status.previousPasswordGeneration === 2,
      90_000,
    );
    expect(await orderUsers()).toEqual([userName(key(name), 2), userName(key(name), 3)]);
    await w().custom.deleteNamespacedCustomObject({
      group: "c5c3.io",
      version: "v1alpha1",
      plural: "rabbitmqvhosts",
      namespace: w().tenantNs,
      name,
    });
    await eventually(
      "the order torn down",
      async () => ((await readOrder(w(), name)) ? undefined : true),
      60_000,
    );
    // Its lost generation's user had no User child to be deleted with: the teardown removed it by name.
    expect(await orderUsers()).toEqual([]);
  }, 180_000);

  it("repairs a delivered Secret a tenant edited, and deletes no user in its grace period early", async () => {
    const name = "edited";
    const v = (n: number) => userName(key(name), n);
    await applyOrder(w(), name, spec(1, "20s"));
    await waitForOrder(w(), name, "generation 1", (o) => isReady(o), 90_000);
    const first = await delivered(name);

    // A username edited to a later generation's, with no rotation under way.
    const consumer1 = new FixedConsumer(first["transport_url"] ?? "");
    await editDelivered(name, { username: v(7) });
    const before1 = consumer1.logins;
    await eventually(
      "the edited username repaired",
      async () => ((await delivered(name))["username"] === v(1) ? true : undefined),
      30_000,
    );
    await sleep(3_000);
    const kept = await readOrder(w(), name);
    expect(kept?.status?.passwordGeneration).toBe(1);
    expect(kept?.status?.username).toBe(v(1));
    expect(await onBroker(v(1))).toBe(true);
    expect(await delivered(name)).toEqual(first);

    // The same edit during generation 1's grace period.
    await applyOrder(w(), name, spec(2, "20s"));
    const switched = await waitForOrder(
      w(),
      name,
      "generation 2 in generation 1's grace period",
      (o) => o?.status?.passwordGeneration === 2 && o.status.previousPasswordDeleteAt !== undefined,
      60_000,
    );
    const second = await delivered(name);
    await editDelivered(name, { username: v(7) });
    await eventually(
      "the edited username repaired during the grace period",
      async () => ((await delivered(name))["username"] === v(2) ? true : undefined),
      30_000,
    );
    // Generation 1 keeps the rest of its grace period (it would be deleted at once on the edit's word).
    const deleteAt = Date.parse(switched?.status?.previousPasswordDeleteAt ?? "");
    await sleep(Math.min(5_000, deleteAt - Date.now() - 3_000));
    expect(await onBroker(v(1))).toBe(true);
    const during = await readOrder(w(), name);
    expect(during?.status?.passwordGeneration).toBe(2);
    expect(during?.status?.previousPasswordGeneration).toBe(1);
    expect(during?.status?.previousPasswordDeleteAt).toBe(switched?.status?.previousPasswordDeleteAt);
    await consumer1.stop();

    // An older copy re-applied after two rotations, while generation 2 is in its grace period.
    await waitForOrder(
      w(),
      name,
      "generation 1 swept",
      (o) => o?.status?.passwordGeneration === 2 && o.status.previousPasswordGeneration === undefined,
      60_000,
    );
    const consumer2 = new FixedConsumer(second["transport_url"] ?? "");
    await applyOrder(w(), name, spec(3, "20s"));
    await waitForOrder(
      w(),
      name,
      "generation 3 in generation 2's grace period",
      (o) => o?.status?.passwordGeneration === 3 && o.status.previousPasswordDeleteAt !== undefined,
      60_000,
    );
    await editDelivered(name, first);
    const before2 = consumer2.logins;
    await eventually(
      "the older copy repaired",
      async () => ((await delivered(name))["username"] === v(3) ? true : undefined),
      30_000,
    );
    await sleep(5_000);
    expect(await onBroker(v(2))).toBe(true);
    await consumer2.stop();

    // What a consumer holding the real credentials saw: no refusal while its generation was kept.
    expect(consumer1.refusals).toEqual([]);
    expect(consumer1.logins).toBeGreaterThan(before1);
    expect(consumer2.refusals).toEqual([]);
    expect(consumer2.logins).toBeGreaterThan(before2);
    // Nothing the operator said believed the edit.
    const notes = (await worldEvents(w())).map((e) => e.message ?? "");
    expect(notes.filter((n) => n.includes(v(7)) || / to 7\b/.test(n))).toEqual([]);
    expect(notes.filter((n) => /from generation [23] to 1\b|to generation 1\b/.test(n))).toEqual([]);
  }, 300_000);

  it("replaces a delivered Secret a tenant marked immutable, and passes no order for a ControlPlane's status write", async () => {
    const name = "immutable";
    await applyOrder(w(), name, spec(1, "10s"));
    await waitForOrder(w(), name, "generation 1", (o) => isReady(o), 90_000);

    // The ControlPlane's own controller writes its status (orders read its spec only).
    const passes = async () =>
      sum(
        parseMetrics(await (await replicas.leading()).metrics(["controller_runtime_reconcile_total"])),
        "controller_runtime_reconcile_total",
        { controller: "rabbitmqvhost" },
      );
    await sleep(3_000);
    const before = await passes();
    for (let i = 0; i < 20; i++) {
      await w().custom.patchNamespacedCustomObjectStatus(
        {
          group: "c5c3.io",
          version: "v1alpha1",
          plural: "controlplanes",
          namespace: w().controlPlane.namespace,
          name: w().controlPlane.name,
          body: { status: { conditions: [{ type: "Ready", status: "True", reason: `Write${i}` }] } },
        },
        mergePatch,
      );
    }
    await sleep(3_000);
    // Three orders of this ControlPlane: each status write woke all three before.
    expect((await passes()) - before).toBeLessThan(3);

    await w().cluster.core.patchNamespacedSecret(
      { namespace: w().tenantNs, name: `${name}-credentials`, body: { immutable: true } },
      mergePatch,
    );
    await applyOrder(w(), name, spec(2, "10s"));
    const rotated = await waitForOrder(
      w(),
      name,
      "generation 2 delivered in place of the immutable Secret",
      (o) => o?.status?.passwordGeneration === 2 && isReady(o),
      60_000,
    );
    expect(rotated?.status?.username).toBe(userName(key(name), 2));
    const secret = await w().cluster.core.readNamespacedSecret({
      namespace: w().tenantNs,
      name: `${name}-credentials`,
    });
    expect(secret.immutable).not.toBe(true);
    const data = await delivered(name);
    expect(data["username"]).toBe(userName(key(name), 2));
    expect(await amqpLogin(data["transport_url"] ?? "")).toEqual({ kind: "ok" });
    const replaced = (await worldEvents(w())).filter((e) => e.reason === "DeliveredSecretReplaced");
    expect(replaced.map((e) => e.message)).toEqual([
      `Secret ${w().tenantNs}/${name}-credentials was marked immutable, which stalls every rotation; it was deleted and made again (without the mark) to carry the live user`,
    ]);
    // The password never reaches an Event.
    for (const e of await worldEvents(w())) expect(e.message ?? "").not.toContain(data["password"] ?? "-");
  }, 180_000);

  it("holds a rotation past the namespace's bound, the delivered user valid meanwhile", async () => {
    // A world of its own: the bound counts per namespace.
    const storm = await createWorld("evstorm");
    try {
      const name = "storm";
      const ordered = (n: number) => applyOrder(storm, name, spec(n, "0s"));
      const read = () => readOrder(storm, name);
      const generation = (n: number) => (o: RabbitMQVhost | undefined) =>
        o?.status?.passwordGeneration === n && isReady(o);
      await ordered(1);
      await waitForOrder(storm, name, "generation 1", generation(1), 90_000);
      await ordered(2);
      await waitForOrder(storm, name, "generation 2", generation(2), 60_000);
      const firstRotation = Date.now();
      await ordered(3);
      await waitForOrder(storm, name, "generation 3", generation(3), 60_000);
      await ordered(4);
      const held = await eventually(
        "the third raise held by the namespace's bound",
        async () => {
          const o = await read();
          return (condition(o, "VhostReady")?.message ?? "").includes(
            `namespace ${storm.tenantNs} started 2 rotations of this kind in the last 30s`,
          )
            ? o
            : undefined;
        },
        15_000,
      );
      expect(held.status?.passwordGeneration).toBe(3);
      expect(isReady(held)).toBe(true);
      const secret = await readSecret(storm, storm.tenantNs, `${name}-credentials`);
      expect(await amqpLogin(secret["transport_url"] ?? "")).toEqual({ kind: "ok" });
      const fourth = await waitForOrder(
        storm,
        name,
        "generation 4 once the window lets it",
        generation(4),
        60_000,
      );
      // It started no sooner than a window after the first of the two before it (whole seconds).
      expect(Date.parse(fourth?.status?.lastRotation ?? "")).toBeGreaterThanOrEqual(
        firstRotation - 5_000 + ROTATION_WINDOW_MS - 1_000,
      );
    } finally {
      await destroyWorld(storm);
    }
  }, 240_000);

  it("waits the whole orphan delay again for an order that came back and was lost again", async () => {
    const name = "returning";
    const ref = {
      group: "c5c3.io",
      version: "v1alpha1",
      plural: "rabbitmqvhosts",
      namespace: w().tenantNs,
      name,
    };
    /** Strips the order's finalizers and deletes it: no teardown runs, its children are orphans. */
    const stripAndDelete = async () => {
      await lose(ref);
      await eventually("the order gone", async () => ((await readOrder(w(), name)) ? undefined : true));
    };
    await applyOrder(w(), name, spec(1, "10s"));
    await waitForOrder(w(), name, "generation 1", (o) => isReady(o), 90_000);
    await stripAndDelete();
    const firstLoss = Date.now();
    // Restored within the delay: it reattaches to its children.
    await sleep(2_000);
    await applyOrder(w(), name, spec(1, "10s"));
    await waitForOrder(w(), name, "back with generation 1", (o) => isReady(o), 60_000);
    await sleep(firstLoss + ORPHAN_DELAY_MS + 2_000 - Date.now());
    // Lost again, a delay after the first loss: its leftovers wait a whole delay from now.
    await stripAndDelete();
    await sleep(ORPHAN_DELAY_MS / 2);
    expect(await childNames(w(), name, "users")).toEqual([userChildName(key(name), 1)]);
    expect(await onBroker(userName(key(name), 1))).toBe(true);
    await eventually(
      "the leftovers removed after the delay",
      async () => ((await childNames(w(), name, "users")).length === 0 ? true : undefined),
      ORPHAN_DELAY_MS + 30_000,
    );
  }, 180_000);
});
