// The machine's CPU over a phase: how busy its cores were (/proc/stat) and which process used the time.
// Every part of the local environment runs in a session of its own whose leader's pid is in
// $LOCALENV_STATE/pids (scripts/localenv/lib.sh), so a part's time is that of every process in its
// session. On two shared cores, a phase that keeps them busy is bound by the machine, not by one floor.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";

/** Cumulative CPU seconds: the cores' busy time, and each part's, since boot. */
export interface CpuSnapshot {
  busySeconds: number;
  /** Busy plus idle, summed over the cores. */
  totalSeconds: number;
  parts: Record<string, number>;
  /** The benchmark's own process. */
  benchSeconds: number;
}

/** The machine's CPU between two snapshots; `operatorSeconds` comes from the operator's own metrics. */
export interface MachineCpu {
  cores: number;
  busySeconds: number;
  totalSeconds: number;
  /** Seconds by group (API servers, etcd, broker, ...), the operator and the benchmark included. */
  byGroup: Record<string, number>;
}

/** The local environment's parts, grouped as the table names them. */
const GROUPS: Record<string, string> = {
  "management-apiserver": "API servers",
  "target-apiserver": "API servers",
  etcd: "etcd",
  "management-controller-manager": "controller managers",
  "target-controller-manager": "controller managers",
  rabbitmq: "broker",
  "rabbitmq-2": "broker",
  "rabbitmq-epmd": "broker",
  openbao: "OpenBao",
  mariadb: "MariaDB",
};

/** Parts whose time the operator's own metrics already count (upstream's topology operator). */
const OPERATOR_PARTS = new Set(["upstream-topology"]);

let ticksPerSecond: number | undefined;
const hz = (): number =>
  (ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100);

/** The fields of /proc/<pid>/stat after the command's closing parenthesis (field 3 is index 0). */
function statFields(pid: string): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined; // gone since the directory was listed
  }
}

/** CPU seconds of every process in each session, children that were waited for included. */
function secondsBySession(): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const f = statFields(pid);
    if (!f) continue;
    // session (field 6), utime, stime, cutime, cstime (fields 14 to 17).
    const session = Number(f[3]);
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    out.set(session, (out.get(session) ?? 0) + ticks / hz());
  }
  return out;
}

function partPids(state: string): Record<string, number> {
  const out: Record<string, number> = {};
  let files: string[];
  try {
    files = readdirSync(`${state}/pids`);
  } catch {
    return out;
  }
  for (const file of files) {
    if (!file.endsWith(".pid")) continue;
    const pid = Number(readFileSync(`${state}/pids/${file}`, "utf8").trim());
    if (pid > 0) out[file.slice(0, -".pid".length)] = pid;
  }
  return out;
}

export function cpuSnapshot(state = process.env["LOCALENV_STATE"] ?? ".localenv"): CpuSnapshot {
  const [, ...values] = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal (guest time is already in user).
  const [user, nice, system, idle, iowait, irq, softirq, steal] = values.map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  const sessions = secondsBySession();
  const parts: Record<string, number> = {};
  for (const [name, pid] of Object.entries(partPids(state))) parts[name] = sessions.get(pid) ?? 0;
  const own = process.cpuUsage();
  return {
    busySeconds: busy / hz(),
    totalSeconds: (busy + idle! + iowait!) / hz(),
    parts,
    benchSeconds: (own.user + own.system) / 1e6,
  };
}

/** What the machine did from `before` to `after`; whatever no part accounts for is "other". */
export function machineCpu(before: CpuSnapshot, after: CpuSnapshot, operatorSeconds: number): MachineCpu {
  const byGroup: Record<string, number> = {};
  for (const [name, seconds] of Object.entries(after.parts)) {
    if (OPERATOR_PARTS.has(name)) continue;
    const group = GROUPS[name] ?? name;
    // A part restarted in between starts again from zero: count what it used since.
    const used = seconds >= (before.parts[name] ?? 0) ? seconds - (before.parts[name] ?? 0) : seconds;
    byGroup[group] = (byGroup[group] ?? 0) + used;
  }
  byGroup["operator"] = operatorSeconds;
  byGroup["benchmark"] = after.benchSeconds - before.benchSeconds;
  const busySeconds = after.busySeconds - before.busySeconds;
  const accounted = Object.values(byGroup).reduce((a, b) => a + b, 0);
  byGroup["other"] = Math.max(0, busySeconds - accounted);
  return {
    cores: cpus().length,
    busySeconds,
    totalSeconds: after.totalSeconds - before.totalSeconds,
    byGroup,
  };
}
