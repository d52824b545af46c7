// The machine's CPU over a phase: the parts' seconds grouped, the operator's from its metrics, and the
// rest of the busy time as "other".
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cpuSnapshot, machineCpu, secondsByPart, type CpuSnapshot, type ProcessCpu } from "./machine.ts";
import { machineText } from "./table.ts";

const snapshot = (busy: number, total: number, parts: Record<string, number>, bench = 0): CpuSnapshot => ({
  busySeconds: busy,
  totalSeconds: total,
  parts,
  benchSeconds: bench,
});

describe("machineCpu", () => {
  it("groups the parts, adds the operator and the benchmark, and calls the rest other", () => {
    const before = snapshot(100, 1_000, {
      "management-apiserver": 10,
      "target-apiserver": 1,
      etcd: 5,
      rabbitmq: 20,
      "rabbitmq-epmd": 0,
    });
    const after = snapshot(
      190,
      1_100,
      { "management-apiserver": 40, "target-apiserver": 2, etcd: 15, rabbitmq: 40, "rabbitmq-epmd": 0 },
      3,
    );
    const m = machineCpu(before, after, 25);
    expect(m.busySeconds).toBe(90);
    expect(m.totalSeconds).toBe(100);
    expect(m.byGroup).toEqual({
      "API servers": 31,
      etcd: 10,
      broker: 20,
      operator: 25,
      benchmark: 3,
      other: 1,
    });
  });

  it("counts a part restarted in between from zero, and leaves upstream's operator to its metrics", () => {
    const m = machineCpu(
      snapshot(0, 100, { openbao: 50, "upstream-topology": 5 }),
      snapshot(20, 200, { openbao: 4, "upstream-topology": 9 }),
      10,
    );
    expect(m.byGroup).toEqual({ OpenBao: 4, operator: 10, benchmark: 0, other: 6 });
  });

  it("reads this machine: the cores' time grows, and a part's time is that of its session", async () => {
    const state = mkdtempSync(join(tmpdir(), "machine-"));
    // A part as scripts/localenv/lib.sh starts one: the leader of a session of its own, its pid on file.
    const part = spawn(process.execPath, ["-e", "for (const end = Date.now() + 400; Date.now() < end; );"], {
      detached: true,
      stdio: "ignore",
    });
    try {
      mkdirSync(join(state, "pids"));
      writeFileSync(join(state, "pids", "spinner.pid"), `${part.pid}\n`);
      const first = cpuSnapshot(state);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const second = cpuSnapshot(state);
      expect(second.totalSeconds - first.totalSeconds).toBeGreaterThan(0);
      expect(second.busySeconds).toBeGreaterThan(first.busySeconds);
      expect(second.parts["spinner"]).toBeGreaterThan(first.parts["spinner"] ?? 0);
    } finally {
      part.kill();
      rmSync(state, { recursive: true, force: true });
    }
  });
});

describe("secondsByPart", () => {
  it("counts a part's session and the sessions started under it, and nothing outside", () => {
    // A RabbitMQ node as the local environment runs it: rabbitmq-server (10) leads its session, beam.smp
    // (11) is in it, erl_child_setup (12) started a session of its own, and the disk monitor's shell (13)
    // another under it; 20 is a process of no part, 30 leads another part's session.
    const procs = new Map<number, ProcessCpu>([
      [1, { ppid: 0, session: 1, seconds: 100 }],
      [10, { ppid: 1, session: 10, seconds: 0.5 }],
      [11, { ppid: 10, session: 10, seconds: 40 }],
      [12, { ppid: 11, session: 12, seconds: 1 }],
      [13, { ppid: 12, session: 13, seconds: 2 }],
      [20, { ppid: 1, session: 20, seconds: 7 }],
      [30, { ppid: 1, session: 30, seconds: 3 }],
      [31, { ppid: 30, session: 30, seconds: 4 }],
    ]);
    const seconds = secondsByPart(procs, new Set([10, 30, 99]));
    expect(Object.fromEntries(seconds)).toEqual({ 10: 43.5, 30: 7 });
  });
});

describe("machineCpu of the brokers", () => {
  it("counts every local broker as the broker", () => {
    const m = machineCpu(
      snapshot(0, 100, { rabbitmq: 1, "rabbitmq-2": 1, "rabbitmq-40": 1, "rabbitmq-epmd": 0 }),
      snapshot(10, 200, { rabbitmq: 4, "rabbitmq-2": 3, "rabbitmq-40": 2, "rabbitmq-epmd": 0 }),
      0,
    );
    expect(m.byGroup["broker"]).toBe(6);
  });
});

describe("machineText", () => {
  it("says how busy the cores were and lists who used them, the largest first", () => {
    const text = machineText({
      cores: 2,
      busySeconds: 90,
      totalSeconds: 100,
      byGroup: { etcd: 10, "API servers": 31, operator: 25, other: 0.01 },
    });
    expect(text).toBe(
      "90% of 2 cores busy (90.0 of 100.0 core-s): API servers 31.0, operator 25.0, etcd 10.0",
    );
  });
});
