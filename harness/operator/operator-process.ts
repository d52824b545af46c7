// The operator as its users run it: `node src/main.ts` in a child process against the local
// environment, with the built-in topology controller. Its JSON log lines are kept for assertions (no
// secret may appear in them) and the process is stopped by its pid, also when a test fails.
import { spawn, type ChildProcess } from "node:child_process";
import {
  closeSync,
  createWriteStream,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
  type WriteStream,
} from "node:fs";
import { fileURLToPath } from "node:url";
import { localEnv } from "../world/env.ts";
import { freePort } from "../world/ports.ts";

// An operator reconciles every order on the cluster, so two operators started by two test runs on one
// machine would act on each other's orders. A lock file beside the local environment's state lets
// one operator run at a time; a lock whose owner process is gone is taken over. A lock that names this
// process is its own (it keeps the lock between killing its operator and starting the next one).
async function acquireLock(path: string, timeoutMs = 15 * 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch {
      const owner = Number(readFileSync(path, { encoding: "utf8", flag: "a+" }));
      if (owner === process.pid) return;
      if (!owner || !alive(owner)) rmSync(path, { force: true });
      else if (Date.now() > deadline) throw new Error(`another test run's operator holds ${path}`);
      else await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Takes the operator lock for this test process, for operators it runs in another way (the chart's pods
 * on the local environment's nodes); releaseOperatorLock() gives it back, and so does the exit of an
 * OperatorProcess started after it.
 */
export async function holdOperatorLock(): Promise<void> {
  await acquireLock(`${localEnv().LOCALENV_STATE}/operator-e2e.lock`);
}

/** Lets go of the operator lock if this process holds it (after a kill() with no start() after it). */
export function releaseOperatorLock(): void {
  const lock = `${localEnv().LOCALENV_STATE}/operator-e2e.lock`;
  try {
    if (Number(readFileSync(lock, "utf8")) === process.pid) rmSync(lock, { force: true });
  } catch {
    // no lock
  }
}

const sources = fileURLToPath(new URL("../../src/main.ts", import.meta.url));

/** The entry point `npm run build` writes from the sources: what the image runs. */
export const builtMain = fileURLToPath(new URL("../../dist/main.js", import.meta.url));

export interface OperatorOptions {
  /** Extra settings as flags, e.g. ["--topology-verification-period=10s"]. */
  args?: string[];
  /** The kubeconfig of the management cluster; default the local one. */
  kubeconfig?: string;
  /** Namespace of the kubeconfig Secrets that register target clusters. */
  clusterSecretNamespace?: string;
  /** The process's working directory; default this process's. */
  cwd?: string;
  /** A file the operator's output is appended to, line by line. */
  logFile?: string;
  /** Keep the output in memory for logs() (default true; a long run writes it to logFile only). */
  keepLogs?: boolean;
  /** Extra environment: a gatekeeper plugin's settings, or a secret setting (never as a flag). */
  env?: Record<string, string>;
  /**
   * Runs the process as one replica of the chart's Deployment: leader election on at its default
   * timings, on the Lease of this name in the default namespace, with this identity. Several replicas
   * of one test share its operator lock: the lock names the test process, which gives it back with
   * releaseOperatorLock().
   */
  replica?: { lease: string; identity: string };
  /**
   * Starts the process from its settings and environment, its output piped; default
   * `node src/main.ts` with this process's Node. The benchmark runs the build (`launchNode(builtMain)`),
   * the image test the built image under runc.
   */
  launch?: (flags: string[], env: NodeJS.ProcessEnv) => ChildProcess;
}

/** The V8 flags of the image's entrypoint (the Dockerfile says why, and why launchNode sets malloc's). */
export const imageNodeFlags: readonly string[] = ["--max-semi-space-size=1", "--memory-saver-mode"];

/**
 * `node <entry>` with this process's Node, as the image's entrypoint starts it; other V8 flags only for
 * a benchmark that weighs them.
 */
export const launchNode =
  (entry: string, cwd: string | undefined, nodeFlags: readonly string[] = imageNodeFlags) =>
  (flags: string[], env: NodeJS.ProcessEnv): ChildProcess =>
    spawn(process.execPath, [...nodeFlags, entry, ...flags], {
      env: { MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "131072", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      ...(cwd ? { cwd } : {}),
    });

const leaderMetric = "leader_election_master_status";
const metricsQuery = (names: readonly string[]) =>
  names.length === 0
    ? ""
    : `?${new URLSearchParams(names.map((name): [string, string] => ["name", name])).toString()}`;

export class OperatorProcess {
  /** /metrics, over plain HTTP: test/runtime/metrics-auth.itest.ts covers HTTPS and its reviews. */
  readonly port: number;
  readonly probePort: number;
  private readonly child: ChildProcess;
  private readonly lines: string[] = [];
  private readonly exited: Promise<number | null>;
  private readonly logFile: WriteStream | undefined;
  /** Set by kill(): the lock passes to this process instead of being removed. */
  private keepLock = false;

  private constructor(child: ChildProcess, port: number, probePort: number, options: OperatorOptions) {
    this.child = child;
    this.port = port;
    this.probePort = probePort;
    this.logFile = options.logFile ? createWriteStream(options.logFile, { flags: "a" }) : undefined;
    const keep = options.keepLogs ?? true;
    let partial = "";
    const collect = (chunk: Buffer) => {
      const text = partial + chunk.toString("utf8");
      const parts = text.split("\n");
      partial = parts.pop() ?? "";
      const lines = parts.filter((l) => l.length > 0);
      this.lines.push(...lines);
      // Without keepLogs only the last lines stay, for the message of a failed start.
      if (!keep && this.lines.length > 100) this.lines.splice(0, this.lines.length - 50);
      if (lines.length > 0) this.logFile?.write(lines.join("\n") + "\n");
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    this.exited = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        this.logFile?.write(`# operator pid ${child.pid} exited: code ${code} signal ${signal}\n`);
        this.logFile?.end();
        resolve(code);
      }),
    );
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  static async start(options: OperatorOptions = {}): Promise<OperatorProcess> {
    const env = localEnv();
    const lock = `${env.LOCALENV_STATE}/operator-e2e.lock`;
    await acquireLock(lock);
    const port = await freePort();
    const probePort = await freePort();
    const flags = [
      `--kubeconfig=${options.kubeconfig ?? env.KUBECONFIG}`,
      `--metrics-bind-address=127.0.0.1:${port}`,
      "--metrics-secure=false",
      `--health-probe-bind-address=127.0.0.1:${probePort}`,
      ...(options.replica
        ? [
            "--leader-elect=true",
            "--leader-election-namespace=default",
            `--leader-election-id=${options.replica.lease}`,
            `--leader-election-identity=${options.replica.identity}`,
          ]
        : ["--leader-elect=false"]),
      `--openbao-address=${env.BAO_ADDR}`,
      "--log-level=debug",
      ...(options.clusterSecretNamespace
        ? [`--cluster-secret-namespace=${options.clusterSecretNamespace}`]
        : []),
      ...(options.args ?? []),
    ];
    // The token goes through the environment, as in a Deployment (never on a command line).
    const childEnv = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith("VHOST_BROKER_")),
    );
    const launch = options.launch ?? launchNode(sources, options.cwd);
    const child = launch(flags, { ...childEnv, ...options.env, VHOST_BROKER_OPENBAO_TOKEN: env.BAO_TOKEN });
    // From now on the lock belongs to the operator itself: it stays held while the operator lives. A
    // replica leaves it with the test process, which may start the next replica beside it.
    if (!options.replica) writeFileSync(lock, String(child.pid));
    const operator = new OperatorProcess(child, port, probePort, options);
    void operator.exited.then(() => {
      if (options.replica) return;
      if (operator.keepLock) writeFileSync(lock, String(process.pid));
      else rmSync(lock, { force: true });
    });
    await operator.waitUntilReady();
    return operator;
  }

  /** Every log line so far. */
  logs(): string {
    return this.lines.join("\n");
  }

  private async waitUntilReady(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.child.exitCode !== null) {
        throw new Error(
          `the operator exited with ${this.child.exitCode}:\n${this.lines.slice(-20).join("\n")}`,
        );
      }
      const ready = await fetch(`http://127.0.0.1:${this.probePort}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) return;
      if (Date.now() > deadline) {
        await this.stop();
        throw new Error(
          `the operator was not ready within ${timeoutMs} ms:\n${this.lines.slice(-20).join("\n")}`,
        );
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Every metric, or only those named (the per-object series of thousands of objects cost a scrape). */
  async metrics(names: readonly string[] = []): Promise<string> {
    return (await fetch(`http://127.0.0.1:${this.port}/metrics${metricsQuery(names)}`)).text();
  }

  /** Whether this replica holds its Lease, by its own metric; false when it does not answer (paused). */
  async leading(timeoutMs = 2_000): Promise<boolean> {
    const text = await fetch(`http://127.0.0.1:${this.port}/metrics${metricsQuery([leaderMetric])}`, {
      signal: AbortSignal.timeout(timeoutMs),
    }).then(
      (r) => r.text(),
      () => "",
    );
    return new RegExp(`^${leaderMetric}\\{[^}]*\\} 1$`, "m").test(text);
  }

  /** SIGSTOP: the process freezes as a long GC pause or a frozen VM would freeze it. */
  pause(): void {
    this.child.kill("SIGSTOP");
  }

  /** SIGCONT after pause(). */
  resume(): void {
    this.child.kill("SIGCONT");
  }

  /**
   * SIGKILL, as a crash or an OOM kill would end it; resolves once it is gone. The lock stays with this
   * process, so that the next start() here takes it back at once and no other run's operator slips in.
   */
  async kill(): Promise<void> {
    this.keepLock = true;
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }

  /** The exit code once the process ended by itself (null: by a signal), undefined while it runs. */
  get exitCode(): number | null | undefined {
    if (this.child.exitCode === null && this.child.signalCode === null) return undefined;
    return this.child.exitCode;
  }

  /**
   * SIGTERM, then SIGKILL after `killAfterMs` (15 s; a drain test gives it the chart's grace period);
   * resolves with the exit code.
   */
  async stop(killAfterMs = 15_000): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      // A paused process would not see the SIGTERM until SIGCONT.
      this.child.kill("SIGCONT");
      this.child.kill("SIGTERM");
      const timer = setTimeout(() => this.child.kill("SIGKILL"), killAfterMs);
      const code = await this.exited;
      clearTimeout(timer);
      return code;
    }
    return this.exited;
  }
}
