// A Python helper of e2e/support/oslo/ run with the local environment's OpenStack libraries (OSLO_PYTHON):
// one JSON line per request on its stdin, one JSON line per answer on its stdout. Credentials reach it
// through its environment only (oslo.config's OS_<GROUP>__<OPTION> variables, or a conf.d folder), never
// its command line. Every secret the test names is masked in its answers (an error's message may quote
// what it parsed) and in its stderr (oslo's own log lines), which is kept in memory for a failure's
// message only.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { localEnv } from "../../../harness/world/env.ts";

export const osloScript = (name: string): string => fileURLToPath(new URL(name, import.meta.url));

export type Answer = Record<string, unknown> & { ok?: boolean; error?: string; message?: string };

export class OsloProcess {
  private readonly child: ChildProcess;
  private readonly answers: Answer[] = [];
  private readonly waiters: ((a: Answer | undefined) => void)[] = [];
  private stderr = "";
  private closed = false;
  private readonly secrets: readonly string[];

  private constructor(
    script: string,
    args: string[],
    env: Record<string, string>,
    secrets: readonly string[],
  ) {
    this.secrets = secrets;
    this.child = spawn(localEnv().OSLO_PYTHON, ["-W", "ignore", osloScript(script), ...args], {
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let partial = "";
    this.child.stdout?.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString("utf8")).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines.filter((l) => l.trim())) this.deliver(JSON.parse(this.mask(line)) as Answer);
    });
    this.child.stderr?.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString("utf8")).slice(-20_000);
    });
    this.child.once("exit", () => {
      this.closed = true;
      for (const waiter of this.waiters.splice(0)) waiter(undefined);
    });
  }

  /** Starts `script args` with `env`; `secrets` are masked in what a failure shows of its stderr. */
  static start(script: string, args: string[], env: Record<string, string>, secrets: string[]): OsloProcess {
    return new OsloProcess(script, args, env, secrets);
  }

  /** Runs `script args` to its end and returns its one answer. */
  static async once(
    script: string,
    args: string[],
    env: Record<string, string>,
    secrets: string[],
    timeoutMs = 30_000,
  ): Promise<Answer> {
    const p = OsloProcess.start(script, args, env, secrets);
    try {
      return await p.next(timeoutMs);
    } finally {
      p.kill();
    }
  }

  private deliver(answer: Answer): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(answer);
    else this.answers.push(answer);
  }

  /** The next answer; throws with the masked stderr when the process ends or stays silent. */
  async next(timeoutMs = 30_000): Promise<Answer> {
    const queued = this.answers.shift();
    if (queued) return queued;
    if (this.closed) throw new Error(`the helper exited:\n${this.log()}`);
    let timer: NodeJS.Timeout | undefined;
    const answer = await new Promise<Answer | undefined>((resolve) => {
      this.waiters.push(resolve);
      timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(resolve), 1);
        resolve(undefined);
      }, timeoutMs);
    });
    clearTimeout(timer);
    if (!answer) throw new Error(`no answer from the helper within ${timeoutMs} ms:\n${this.log()}`);
    return answer;
  }

  /** Sends one request and waits for its answer. */
  async request(request: Record<string, unknown>, timeoutMs = 30_000): Promise<Answer> {
    this.child.stdin?.write(JSON.stringify(request) + "\n");
    return this.next(timeoutMs);
  }

  /** The last of its stderr, every secret masked. */
  log(): string {
    return this.mask(this.stderr.slice(-4_000));
  }

  private mask(text: string): string {
    for (const secret of this.secrets) {
      for (const form of [secret, encodeURIComponent(secret)]) text = text.replaceAll(form, "***");
    }
    return text;
  }

  get running(): boolean {
    return !this.closed;
  }

  /** SIGKILL, as a pod's container is killed; its connections drop with it. */
  kill(): void {
    if (!this.closed) this.child.kill("SIGKILL");
  }

  async exited(): Promise<void> {
    if (this.closed) return;
    await new Promise((r) => this.child.once("exit", r));
  }
}
