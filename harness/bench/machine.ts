// The machine's CPU over a phase: how busy its cores were (/proc/stat) and which process used the time.
// Every part of the local environment runs in a session of its own whose leader's pid is in
// $LOCALENV_STATE/pids (scripts/localenv/lib.sh), so a part's time is that of every process in its
// session, and of the processes under them that started sessions of their own (an Erlang node's port
// programs do: erl_child_setup, and the disk monitor's shell under it). A RabbitMQ 4.x node runs from
// its root filesystem (`unshare --mount ... sh -c '... exec chroot ...'`, scripts/localenv/rabbitmq.sh),
// which execs down to rabbitmq-server in the host's pid namespace: the pid on file is still the
// session's leader, beam.smp its child. On two shared cores, a phase that keeps them busy is bound by the machine, not by one floor.
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
  "rabbitmq-40": "broker",
  "rabbitmq-43": "broker",
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

/** What /proc says of one process: its parent, its session, and its CPU seconds (waited-for children's included). */
export interface ProcessCpu {
  ppid: number;
  session: number;
  seconds: number;
}

function processes(): Map<number, ProcessCpu> {
  const out = new Map<number, ProcessCpu>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const f = statFields(pid);
    if (!f) continue;
    // ppid (field 4), session (field 6), utime, stime, cutime, cstime (fields 14 to 17).
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    out.set(Number(pid), { ppid: Number(f[1]), session: Number(f[3]), seconds: ticks / hz() });
  }
  return out;
}

/**
 * CPU seconds of each part, by the pid of its session's leader: every process of that session, and
 * every process whose parent, or its parent's parent and so on, is one of them.
 */
export function secondsByPart(procs: Map<number, ProcessCpu>, leaders: Set<number>): Map<number, number> {
  const owner = new Map<number, number | undefined>();
  const ownerOf = (pid: number): number | undefined => {
    if (owner.has(pid)) return owner.get(pid);
    const chain: number[] = [];
    let found: number | undefined;
    for (let p: number | undefined = pid; p !== undefined && p > 1;) {
      if (owner.has(p)) {
        found = owner.get(p);
        break;
      }
      chain.push(p);
      const proc = procs.get(p);
      if (!proc) break;
      if (leaders.has(proc.session)) {
        found = proc.session;
        break;
      }
      p = chain.includes(proc.ppid) ? undefined : proc.ppid;
    }
    for (const c of chain) owner.set(c, found);
    return found;
  };
  const out = new Map<number, number>();
  for (const [pid, proc] of procs) {
    const part = ownerOf(pid);
    if (part !== undefined) out.set(part, (out.get(part) ?? 0) + proc.seconds);
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

/**
 * The resident memory of a part of the local environment: every process of its session (VmRSS of
 * /proc), 0 when it does not run. A broker's own figure (mem_used of /api/nodes) comes from its
 * management statistics, which RabbitMQ 4.3 failed to serve (500, badkey in node_stats) holding 8,000 vhosts.
 */
export function partRssBytes(part: string, state = process.env["LOCALENV_STATE"] ?? ".localenv"): number {
  const leader = partPids(state)[part];
  if (leader === undefined) return 0;
  let kib = 0;
  for (const [pid, proc] of processes()) {
    if (proc.session !== leader && pid !== leader) continue;
    try {
      const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m);
      kib += Number(line?.[1] ?? 0);
    } catch {
      // gone since the listing
    }
  }
  return kib * 1024;
}

export function cpuSnapshot(state = process.env["LOCALENV_STATE"] ?? ".localenv"): CpuSnapshot {
  const [, ...values] = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal (guest time is already in user).
  const [user, nice, system, idle, iowait, irq, softirq, steal] = values.map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  const pids = partPids(state);
  const seconds = secondsByPart(processes(), new Set(Object.values(pids)));
  const parts: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) parts[name] = seconds.get(pid) ?? 0;
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
