// The chaos suite's short variant (docs/reliability.md): two orders rotating every minute, one on the
// target cluster, served by two replicas with leader election at the default timings, a login prober
// each, and one of every fault: the leader killed, frozen past its Lease and stopped with SIGTERM; an
// outage of RabbitMQ, OpenBao, etcd and each kube-apiserver; a withdrawal of the published endpoint; a
// status wipe; a delivery stalled while a successor's User is lost; an order's live User lost during a
// grace (its finalizer stripped, the leader frozen); the management-cluster order's ControlPlane pointed
// at another bus (the 3.10 broker), the order moved there with no refused login; and the leader's wall
// clock stepped five minutes back (libfaketime) while it must keep its Lease, at points chosen by a seed
// (printed; CHAOS_SEED replays it), and at least one rotation and one sweep under way during a fault.
// The same code as `npm run chaos`, with the same checks.
import { randomInt } from "node:crypto";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { FULL, SHORT, plan, prng } from "../harness/chaos/chaos-plan.ts";
import { formatReport } from "../harness/chaos/chaos-report.ts";
import { runChaos } from "../harness/chaos/chaos.ts";

const seed = process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : randomInt(2 ** 31);

describe("the chaos suite, short variant", () => {
  it("plans the same faults from the same seed, and every kind of fault", () => {
    expect(plan({ ...SHORT, seed })).toEqual(plan({ ...SHORT, seed }));
    expect([prng(1)(), prng(1)()]).toEqual([prng(1)(), prng(1)()]);
    // The bus changes draw from their own stream: the other faults are the seed's without them.
    const others = (faults: { kind: string }[]) => faults.filter((f) => f.kind !== "bus-change");
    expect(others(plan({ ...SHORT, seed }))).toEqual(
      plan({ ...SHORT, seed, outages: { ...SHORT.outages, "bus-change": 0 } }),
    );
    expect(plan({ ...FULL, seed }).filter((f) => f.kind === "bus-change")).toHaveLength(2);
    const kinds = new Set(plan({ ...SHORT, seed }).map((f) => f.kind));
    expect([...kinds].sort()).toEqual([
      "broker-unanswering",
      "bus-change",
      "clock-step",
      "endpoint",
      "etcd",
      "kill",
      "lost-live-user",
      "management-apiserver",
      "openbao",
      "partition",
      "pause",
      "rabbitmq",
      "stalled-delivery",
      "status-wipe",
      "target-apiserver",
      "term",
    ]);
  });

  it(
    `keeps the promise under faults (seed ${seed})`,
    async () => {
      console.log(
        `chaos: seed ${seed} (replay: CHAOS_SEED=${seed} or npm run chaos -- --short --seed=${seed})`,
      );
      const report = await runChaos({
        ...SHORT,
        seed,
        workdir: `${tmpdir()}/vhost-broker-chaos/itest-${Date.now()}-seed-${seed}`,
        log: (line) => console.log(line),
      });
      console.log(formatReport(report));
      expect(report.authFailures).toEqual([]);
      expect(report.logins.authFailed).toBe(0);
      expect(report.logins.ok).toBeGreaterThan(0);
      expect(report.leaderFaults.pause).toBe(SHORT.leaderFaults.pause);
      expect(report.leaderFaults.term).toBe(SHORT.leaderFaults.term);
      expect(report.leaderFaults.kill).toBeGreaterThanOrEqual(SHORT.leaderFaults.kill);
      expect(report.outages).toEqual(SHORT.outages);
      expect(report.rotations).toBeGreaterThanOrEqual(SHORT.minRotations);
      expect(report.overlaps.rotation).toBeGreaterThanOrEqual(1);
      expect(report.overlaps.sweep).toBeGreaterThanOrEqual(1);
      expect(report.replicas.mostLeaders).toBe(1);
      expect(report.clockSteps.map((c) => c.keptLease)).toEqual([true]);
      // The lost live User was replaced by a successor, with no refusal (authFailed above).
      expect(report.lostLiveUsers.map((l) => l.replacedMs !== undefined)).toEqual([true]);
      // The bus change moved the management-cluster order, with no refusal (authFailed above).
      expect(report.busChanges.map((b) => b.movedMs !== undefined)).toEqual([true]);
      expect(report.logins.otherOutsideFaults).toBe(0);
      expect(report.failures).toEqual([]);
    },
    15 * 60_000,
  );
});
