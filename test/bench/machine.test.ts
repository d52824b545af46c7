// The machine's CPU over a phase: the parts' seconds grouped, the operator's from its metrics, and the
// rest of the busy time as "other".
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cpuSnapshot, machineCpu, type CpuSnapshot } from "../../scripts/bench/machine.ts";
import { machineText } from "../../scripts/bench/table.ts";

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
