// Two operator processes as the chart's two replicas (leader election at the default 15 s / 10 s / 2 s,
// a Lease of their own per run), each behind proxies of its own to the API server and to OpenBao that
// record every request it sends, with its time: the backends cannot tell the two apart (one identity,
// one token), the proxies can. Both reach the broker's management API through one proxy (the
// RabbitmqCluster names one address), which tells them apart by the process owning each connection. And the operator's /metrics cannot tell: a process whose Lease lapsed
// exits within a second of waking, so nothing is left to scrape.
//
// 1. The leader frozen (SIGSTOP) past its Lease right after a rotation was requested: the standby takes
//    the Lease and completes the rotation; thawed with its stale cache and passes in flight, the old
//    leader sends no write to the API server, OpenBao or the broker, says that it stepped down, and exits 1. A
//    consumer reading the delivered Secret before each login is never refused, the order's
//    status.passwordGeneration never goes back, and the Lease never returns to the old leader.
// 2. The leader SIGTERMed while its pass waits on a slow OpenBao (each request held 3 s): it drains the
//    pass, renewing meanwhile, then releases and exits 0; the standby acquires only after the old leader's
//    last write was answered, and writes nothing before it.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userName } from "../src/orders/rabbitmq/naming.ts";
import { localEnv } from "../harness/world/env.ts";
import { eventually, isApiError } from "../harness/world/kube.ts";
import { amqpLogin, LoginProber } from "../harness/probes/login-prober.ts";
import { OperatorProcess, releaseOperatorLock } from "../harness/operator/operator-process.ts";
import { RecordingProxy, type ProxiedRequest } from "../harness/world/recording-proxy.ts";
import { scratchFolder } from "../harness/world/scratch.ts";
import {
  applyOrder,
  brokerApi,
  createWorld,
  destroyWorld,
  isReady,
  readOrder,
  readSecret,
  waitForOrder,
  type World,
} from "../harness/world/world.ts";

const RUN = `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
const LEASE_NAMESPACE = "default";
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases`;
/** Longer than the Lease (15 s) plus a retry period and a cache sync. */
const PAUSE_MS = 25_000;
/** How long the thawed leader is watched. */
const THAWED_MS = 20_000;
/** How long the slow OpenBao holds each request. */
const SLOW_OPENBAO_MS = 3_000;

interface Replica {
  identity: string;
  process: OperatorProcess;
  /** Its requests to the API server. */
  api: RecordingProxy;
  /** Its requests to OpenBao. */
  bao: RecordingProxy;
}

interface LogLine {
  time: number;
  msg: string;
}

/** The process's JSON log lines, their time as epoch milliseconds. */
function logLines(process: OperatorProcess): LogLine[] {
  return process
    .logs()
    .split("\n")
    .flatMap((line) => {
      try {
        const parsed = JSON.parse(line) as { time?: string; msg?: unknown };
        return typeof parsed.msg === "string"
          ? [{ time: Date.parse(parsed.time ?? ""), msg: parsed.msg }]
          : [];
      } catch {
        return [];
      }
    });
}

const isLease = (r: ProxiedRequest) => r.path.startsWith(LEASES);
const show = (r: ProxiedRequest) =>
  `${r.method} ${r.path} received ${new Date(r.receivedAt).toISOString()} status ${r.status ?? "none"}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** Runs `step` again and again, one at a time (answers never overtake each other), until stopped. */
function poll(step: () => Promise<void>, intervalMs: number): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await step().catch(() => undefined);
      await sleep(intervalMs);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

describe("two replicas, writes fenced by the Lease, operator processes", () => {
  let world: World | undefined;
  const w = (): World => {
    if (!world) throw new Error("no world");
    return world;
  };
  const scratch = scratchFolder("vb-leader-fencing-", "leader-fencing: logs and kubeconfigs");
  const replicas: Replica[] = [];
  const proxies: RecordingProxy[] = [];
  /** Both replicas' requests to the broker's management API, each with the pid that sent it. */
  let broker: RecordingProxy | undefined;
  const brokerWrites = (process: OperatorProcess, since = 0) =>
    (broker?.writes() ?? []).filter((r) => r.clientPid === process.pid && r.receivedAt >= since);
  const leases: string[] = [];
  const key = (name: string) => ({ cluster: "", namespace: w().tenantNs, name });
  const spec = (generation?: number) => ({
    ...(generation ? { passwordGeneration: generation } : {}),
    rotation: { interval: "0s", gracePeriod: "10s" },
    deletionPolicy: "Delete",
  });
  const delivered = async (name: string) =>
    (await readSecret(w(), w().tenantNs, `${name}-credentials`))["username"];
  const onBroker = async (user: string) =>
    (await brokerApi(w(), "GET", `/api/users/${encodeURIComponent(user)}`)).status === 200;
  const coordination = () => w().cluster.config.makeApiClient(k8s.CoordinationV1Api);
  const holder = async (lease: string) =>
    (await coordination().readNamespacedLease({ name: lease, namespace: LEASE_NAMESPACE })).spec
      ?.holderIdentity ?? "";

  async function startReplica(lease: string, identity: string, openBaoDelayMs = 0): Promise<Replica> {
    const dir = join(scratch.path, identity);
    mkdirSync(dir, { recursive: true });
    const api = await RecordingProxy.kubeApi();
    proxies.push(api);
    const bao = await RecordingProxy.http(localEnv().BAO_ADDR);
    proxies.push(bao);
    bao.delayMs = openBaoDelayMs;
    const process = await OperatorProcess.start({
      kubeconfig: api.writeKubeconfig(join(dir, "kubeconfig")),
      replica: { lease, identity },
      args: [`--openbao-address=http://127.0.0.1:${bao.port}`],
      cwd: dir,
      logFile: join(dir, "operator.log"),
    });
    const replica = { identity, process, api, bao };
    replicas.push(replica);
    return replica;
  }

  /** Two replicas on a fresh Lease; resolves once one of them leads: [leader, standby]. */
  async function startPair(what: string, openBaoDelayMs = 0): Promise<[Replica, Replica]> {
    // One pair at a time: replicas left by an earlier test (it failed) would lead on their own Lease.
    for (const r of replicas) if (r.process.exitCode === undefined) await r.process.stop();
    const lease = `vb-fencing-${RUN}-${what}`;
    leases.push(lease);
    const a = await startReplica(lease, `${what}-a`, openBaoDelayMs);
    const b = await startReplica(lease, `${what}-b`, openBaoDelayMs);
    const leader = await eventually(
      "one replica to lead",
      async () => {
        const [la, lb] = await Promise.all([a.process.leading(), b.process.leading()]);
        if (la && lb) throw new Error("both replicas lead");
        return la ? a : lb ? b : undefined;
      },
      45_000,
    );
    const standby = leader === a ? b : a;
    expect(await standby.process.leading()).toBe(false);
    return [leader, standby];
  }

  /** Deletes the order while a leader runs and waits until it is gone. */
  async function deleteOrder(name: string): Promise<void> {
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
      90_000,
    );
  }

  beforeAll(async () => {
    broker = await RecordingProxy.http(localEnv().RABBITMQ_MANAGEMENT_URL);
    proxies.push(broker);
    broker.candidates = () => replicas.flatMap((r) => (r.process.pid === undefined ? [] : [r.process.pid]));
    world = await createWorld("fence", { brokerManagementUrl: `http://127.0.0.1:${broker.port}` });
  }, 120_000);

  afterAll(async () => {
    let fallback: OperatorProcess | undefined;
    try {
      // The teardown needs a leader: when no replica is left, a plain operator does it.
      if (world && !replicas.some((r) => r.process.exitCode === undefined)) {
        fallback = await OperatorProcess.start({
          cwd: scratch.path,
          logFile: join(scratch.path, "teardown.log"),
        });
      }
      await destroyWorld(world, 120_000);
    } finally {
      for (const r of replicas) await r.process.stop();
      await fallback?.stop();
      for (const p of proxies) await p.close();
      for (const name of leases) {
        await coordination()
          .deleteNamespacedLease({ name, namespace: LEASE_NAMESPACE })
          .catch((error: unknown) => {
            if (!isApiError(error, 404)) throw error;
          });
      }
      releaseOperatorLock();
      scratch.release();
    }
  }, 300_000);

  it("a leader frozen past its Lease while the standby rotates writes nothing once thawed", async () => {
    const [old, standby] = await startPair("freeze");
    const lease = leases[leases.length - 1] ?? "";
    const name = "frozen";
    await applyOrder(w(), name, spec());
    await waitForOrder(
      w(),
      name,
      "generation 1 Ready",
      (o) => isReady(o) && o?.status?.passwordGeneration === 1,
      90_000,
    );
    // The instrument sees the leader's writes: its status writes and its backup went through its proxies.
    expect(old.api.writes().filter((r) => !isLease(r)).length).toBeGreaterThan(0);
    expect(old.bao.writes().length).toBeGreaterThan(0);
    expect(brokerWrites(old.process).length).toBeGreaterThan(0);
    expect(standby.api.writes().filter((r) => !isLease(r))).toEqual([]);
    expect(brokerWrites(standby.process)).toEqual([]);

    const generations: number[] = [];
    const stopGenerations = poll(async () => {
      const g = (await readOrder(w(), name))?.status?.passwordGeneration;
      if (g !== undefined) generations.push(g);
    }, 250);
    const holders: { at: number; holder: string }[] = [];
    const stopHolders = poll(async () => {
      const h = await holder(lease);
      if (holders[holders.length - 1]?.holder !== h) holders.push({ at: Date.now(), holder: h });
    }, 250);
    const prober = new LoginProber({
      core: w().cluster.core,
      namespace: w().tenantNs,
      order: name,
      intervalMs: 500,
    }).start();
    let pausedAt = 0;
    let resumedAt = 0;
    try {
      await sleep(2_000);
      // The rotation requested, and the leader frozen at once: its pass for it may be under way.
      await applyOrder(w(), name, spec(2));
      old.process.pause();
      pausedAt = Date.now();
      await eventually(
        "the standby to take the Lease",
        () => standby.process.leading().then((l) => l || undefined),
        45_000,
      );
      const tookOverAfter = Date.now() - pausedAt;
      await eventually(
        "the standby to deliver generation 2",
        async () => ((await delivered(name)) === userName(key(name), 2) ? true : undefined),
        60_000,
      );
      const rotatedAfter = Date.now() - pausedAt;
      await waitForOrder(
        w(),
        name,
        "status generation 2",
        (o) => o?.status?.passwordGeneration === 2,
        30_000,
      );
      // The standby's own writes did it, after it took over.
      expect(
        standby.api.writes().filter((r) => !isLease(r) && r.receivedAt > pausedAt).length,
      ).toBeGreaterThan(0);
      expect(brokerWrites(standby.process, pausedAt).length).toBeGreaterThan(0);
      await sleep(pausedAt + PAUSE_MS - Date.now());
      console.log(
        `frozen ${Date.now() - pausedAt} ms: the standby led after ${tookOverAfter} ms, delivered generation 2 after ${rotatedAfter} ms`,
      );
      // Taken before the thaw: the thawed process may notice its lapsed Lease and log it within the
      // millisecond, before this process reads its clock again.
      resumedAt = Date.now();
      old.process.resume();
      await sleep(THAWED_MS);
    } finally {
      old.process.resume();
      await stopGenerations();
      await stopHolders();
      await prober.stop();
    }

    // No write from the thawed leader: not to the API server, not to OpenBao, not to the broker.
    const thawed = (p: RecordingProxy) => p.writes().filter((r) => r.receivedAt >= resumedAt);
    const leaseWrites = thawed(old.api).filter(isLease);
    console.log(
      `thawed leader: ${old.api.requests.filter((r) => r.receivedAt >= resumedAt).length} requests to the API server ` +
        `(${leaseWrites.length} Lease writes), ${old.bao.requests.filter((r) => r.receivedAt >= resumedAt).length} to OpenBao, ` +
        `${(broker?.requests ?? []).filter((r) => r.clientPid === old.process.pid && r.receivedAt >= resumedAt).length} to the broker; ` +
        `exit code ${old.process.exitCode}`,
    );
    expect(
      thawed(old.api)
        .filter((r) => !isLease(r))
        .map(show),
    ).toEqual([]);
    expect(thawed(old.bao).map(show)).toEqual([]);
    expect(brokerWrites(old.process, resumedAt).map(show)).toEqual([]);
    // Every broker request was told apart: none is left without the process that sent it.
    expect((broker?.requests ?? []).filter((r) => r.clientPid === undefined).map(show)).toEqual([]);
    // It says why it stopped, and exits for a fresh process to stand by.
    const said = logLines(old.process).filter((l) => l.time >= resumedAt);
    console.log(said.map((l) => `thawed leader log: ${new Date(l.time).toISOString()} ${l.msg}`).join("\n"));
    expect(
      said.some(
        (l) =>
          l.msg.startsWith("write refused: this process's hold on the leader Lease lapsed") ||
          l.msg.startsWith("lost the leader Lease"),
      ),
    ).toBe(true);
    expect(said.some((l) => l.msg.startsWith("leadership lost; exiting"))).toBe(true);
    expect(old.process.exitCode).toBe(1);
    // The Lease went to the standby and never back.
    console.log(
      `Lease holders: ${holders.map((h) => `${new Date(h.at).toISOString()} ${h.holder}`).join(", ")}`,
    );
    const firstStandby = holders.findIndex((h) => h.holder === standby.identity);
    expect(holders[0]?.holder).toBe(old.identity);
    expect(firstStandby).toBeGreaterThan(0);
    expect(holders.slice(firstStandby).map((h) => h.holder)).toEqual([standby.identity]);

    // A consumer was never refused, through the rotation, the takeover and the thaw.
    const counts = prober.snapshot();
    console.log(prober.summary());
    expect(counts.authFailures).toBe(0);
    expect(counts.otherFailures).toBe(0);
    expect(counts.usernamesSeen).toEqual([userName(key(name), 1), userName(key(name), 2)]);
    expect(counts.successes).toBeGreaterThan(40);
    // The generation the status reports never went back.
    expect(generations.length).toBeGreaterThan(100);
    for (let i = 1; i < generations.length; i++) {
      expect(generations[i], `status generation at poll ${i}`).toBeGreaterThanOrEqual(
        generations[i - 1] ?? 0,
      );
    }
    expect(generations[0]).toBe(1);
    expect(generations[generations.length - 1]).toBe(2);
    // The broker's live user is generation 2's: delivered, logging in, and the only one left after the sweep.
    expect(await delivered(name)).toBe(userName(key(name), 2));
    await waitForOrder(
      w(),
      name,
      "generation 1 swept",
      (o) => o?.status?.passwordGeneration === 2 && o.status.previousPasswordGeneration === undefined,
      60_000,
    );
    expect(await onBroker(userName(key(name), 2))).toBe(true);
    expect(await onBroker(userName(key(name), 1))).toBe(false);
    const secret = await readSecret(w(), w().tenantNs, `${name}-credentials`);
    expect(await amqpLogin(secret["transport_url"] ?? "")).toEqual({ kind: "ok" });

    await deleteOrder(name);
    expect(await standby.process.stop()).toBe(0);
  }, 300_000);

  it("a leader stopped while its pass waits on a slow OpenBao drains, then releases; the standby acquires after its last write", async () => {
    const [old, standby] = await startPair("drain", SLOW_OPENBAO_MS);
    const name = "drained";
    await applyOrder(w(), name, spec());
    await waitForOrder(
      w(),
      name,
      "generation 1 Ready",
      (o) => isReady(o) && o?.status?.passwordGeneration === 1,
      120_000,
    );
    const requestedAt = Date.now();
    await applyOrder(w(), name, spec(2));
    // The leader's pass sends the successor's credentials to OpenBao, and the slow proxy holds them.
    const held = await eventually(
      "the leader's OpenBao write held by the slow proxy",
      async () =>
        old.bao.requests.find(
          (r) => r.method === "POST" && r.receivedAt >= requestedAt && r.forwardedAt === undefined,
        ),
      60_000,
      20,
    );
    const sigtermAt = Date.now();
    // The chart's terminationGracePeriodSeconds: SIGKILL only past it.
    const code = await old.process.stop(150_000);
    const exitedAt = Date.now();
    const acquired = await eventually(
      "the standby to acquire the Lease",
      async () => logLines(standby.process).find((l) => l.msg === "acquired the leader Lease"),
      30_000,
    );
    const oldLog = logLines(old.process);
    const released = oldLog.find((l) => l.msg === "released the leader Lease");
    const oldWrites = [
      ...old.api.writes().filter((r) => !isLease(r)),
      ...old.bao.writes(),
      ...brokerWrites(old.process),
    ];
    // A write never answered may still land: it counts as the latest.
    const lastWrite = Math.max(...oldWrites.map((r) => r.answeredAt ?? Infinity));
    const last = oldWrites.find((r) => (r.answeredAt ?? Infinity) === lastWrite);
    const renewals = old.api
      .writes()
      .filter((r) => isLease(r) && r.receivedAt > sigtermAt && r.receivedAt < (released?.time ?? exitedAt));
    const iso = (t: number | undefined) => (t === undefined ? "never" : new Date(t).toISOString());
    console.log(
      [
        `SIGTERM ${iso(sigtermAt)} with ${held.method} ${held.path} held by the slow OpenBao`,
        `that write forwarded ${iso(held.forwardedAt)}, answered ${iso(held.answeredAt)}`,
        `the old leader's last write answered ${iso(lastWrite)}: ${last ? show(last) : "none"}`,
        `${renewals.length} renewals during the drain; released ${iso(released?.time)}; exited ${iso(exitedAt)} with ${code}`,
        `the standby acquired ${iso(acquired.time)}`,
      ].join("\n"),
    );

    expect(code).toBe(0);
    expect(oldLog.some((l) => l.msg.startsWith("shutting down: letting reconciles in flight finish"))).toBe(
      true,
    );
    expect(released).toBeDefined();
    // The write held at the SIGTERM went out and was answered after it: the drain let the pass write.
    expect(held.forwardedAt ?? 0).toBeGreaterThan(sigtermAt);
    expect(held.answeredAt ?? Infinity).toBeLessThanOrEqual(lastWrite);
    // The old leader released after its last write, and the standby acquired after both.
    expect(lastWrite).toBeLessThanOrEqual(released?.time ?? 0);
    expect(acquired.time).toBeGreaterThan(lastWrite);
    expect(acquired.time).toBeGreaterThanOrEqual(released?.time ?? Infinity);
    // Nothing of the old leader went out after its release.
    expect(
      [...old.api.writes(), ...old.bao.writes(), ...brokerWrites(old.process)]
        .filter((r) => r.receivedAt > (released?.time ?? 0))
        .map(show),
    ).toEqual([]);
    // A standby writes nothing before it leads.
    expect(
      [
        ...standby.api.writes().filter((r) => !isLease(r)),
        ...standby.bao.writes(),
        ...brokerWrites(standby.process),
      ]
        .filter((r) => r.receivedAt < acquired.time)
        .map(show),
    ).toEqual([]);

    // The rotation completes, by whichever of the two got that far.
    await waitForOrder(
      w(),
      name,
      "generation 2 Ready",
      (o) => isReady(o) && o?.status?.passwordGeneration === 2,
      120_000,
    );
    expect(await delivered(name)).toBe(userName(key(name), 2));
    standby.bao.delayMs = 0;
    await deleteOrder(name);
  }, 360_000);
});
