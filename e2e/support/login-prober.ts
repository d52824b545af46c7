// A consumer of a delivered Secret, as a tenant's service is one: before every connection it reads
// `<order>-credentials` from the Kubernetes API again, connects over AMQP with the transport_url it
// holds, opens a channel and closes. It counts what happened, so that a test can claim "no failed login
// across rotations" from real connections. Nothing it records carries a password.
import * as k8s from "@kubernetes/client-node";
import amqp from "amqplib";

export type LoginOutcome =
  { kind: "ok" } | { kind: "auth"; message: string } | { kind: "other"; message: string };

/** Where to connect instead of the delivered host and port (only for a Secret naming an unreachable one). */
export interface EndpointOverride {
  host: string;
  port: number;
}

/**
 * One AMQP login with an oslo.messaging transport_url (`rabbit://user:pass@host:port/vhost`): connect,
 * open a channel, close. ACCESS_REFUSED is the broker refusing the credentials; anything else (a refused
 * vhost, a network error) is another failure. Messages have the password removed.
 */
export async function amqpLogin(transportUrl: string, override?: EndpointOverride): Promise<LoginOutcome> {
  let password = "";
  try {
    const url = new URL(transportUrl);
    if (url.protocol !== "rabbit:") return { kind: "other", message: `unexpected scheme ${url.protocol}` };
    password = decodeURIComponent(url.password);
    const connection = await amqp.connect(
      {
        protocol: "amqp",
        hostname: override?.host ?? url.hostname.replace(/^\[(.*)\]$/, "$1"),
        port: override?.port ?? Number(url.port || 5672),
        username: decodeURIComponent(url.username),
        password,
        vhost: decodeURIComponent(url.pathname.slice(1)),
        heartbeat: 0,
      },
      { timeout: 5_000 },
    );
    connection.on("error", () => undefined);
    try {
      const channel = await connection.createChannel();
      await channel.close();
    } finally {
      await connection.close();
    }
    return { kind: "ok" };
  } catch (error) {
    let message = error instanceof Error ? error.message : String(error);
    if (password) message = message.split(password).join("***");
    return /ACCESS.REFUSED/.test(message) ? { kind: "auth", message } : { kind: "other", message };
  }
}

function userOf(transportUrl: string): string | undefined {
  try {
    return decodeURIComponent(new URL(transportUrl).username);
  } catch {
    return undefined;
  }
}

export interface ProberOptions {
  core: k8s.CoreV1Api;
  namespace: string;
  /** The order's name; the prober reads `<order>-credentials`. */
  order: string;
  intervalMs?: number;
  maxAttempts?: number;
  maxDurationMs?: number;
  override?: EndpointOverride;
  /** Called after every attempt with its outcome and the username the Secret named (if any). */
  onOutcome?: (outcome: LoginOutcome, username: string) => void;
  /**
   * The consumer's login with the delivered keys; default an AMQP login with transport_url (a
   * MariaDBDatabase's consumer logs in over SQL instead).
   */
  login?: (data: Record<string, string>) => Promise<LoginOutcome>;
}

export interface ProberCounts {
  attempts: number;
  successes: number;
  /** Logins the broker refused (ACCESS_REFUSED). */
  authFailures: number;
  /** Every other failure: the Secret unreadable or inconsistent, a refused vhost, the network. */
  otherFailures: number;
  /** Successful logins per broker username, in the order the usernames were first used. */
  successesByUser: Record<string, number>;
  /** The distinct usernames the delivered Secret named. */
  usernamesSeen: string[];
  /** Up to ten distinct failure messages (no passwords in them). */
  failureMessages: string[];
  durationMs: number;
}

const decode = (value: string | undefined): string =>
  value ? Buffer.from(value, "base64").toString("utf8") : "";

/** The counts of a prober that has not tried yet. */
export function emptyCounts(): ProberCounts {
  return {
    attempts: 0,
    successes: 0,
    authFailures: 0,
    otherFailures: 0,
    successesByUser: {},
    usernamesSeen: [],
    failureMessages: [],
    durationMs: 0,
  };
}

export class LoginProber {
  private readonly options: Required<Omit<ProberOptions, "override" | "onOutcome" | "login">> &
    Pick<ProberOptions, "override" | "onOutcome" | "login">;
  private readonly counts: ProberCounts = emptyCounts();
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(options: ProberOptions) {
    this.options = { intervalMs: 300, maxAttempts: 2_000, maxDurationMs: 300_000, ...options };
  }

  /** Starts probing in the background until stop(), maxAttempts or maxDurationMs. */
  start(): this {
    this.loop ??= this.run();
    return this;
  }

  /** Stops after the attempt under way and returns the counts. */
  async stop(): Promise<ProberCounts> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    return this.snapshot();
  }

  /** Waits until the prober ends on its own (maxAttempts or maxDurationMs) and returns the counts. */
  async finished(): Promise<ProberCounts> {
    await this.loop;
    return this.snapshot();
  }

  snapshot(): ProberCounts {
    return structuredClone(this.counts);
  }

  /** One line for the test output. */
  summary(): string {
    const c = this.counts;
    const users = Object.entries(c.successesByUser)
      .map(([user, n]) => `${user}=${n}`)
      .join(" ");
    return (
      `login prober ${this.options.namespace}/${this.options.order}: attempts=${c.attempts} ` +
      `successes=${c.successes} authFailures=${c.authFailures} otherFailures=${c.otherFailures} ` +
      `distinctUsernames=${c.usernamesSeen.length} [${users}] durationMs=${c.durationMs}`
    );
  }

  private async run(): Promise<void> {
    const started = Date.now();
    const { intervalMs, maxAttempts, maxDurationMs } = this.options;
    while (!this.stopped && this.counts.attempts < maxAttempts && Date.now() - started < maxDurationMs) {
      await this.attempt();
      this.counts.durationMs = Date.now() - started;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, intervalMs);
      });
    }
    this.counts.durationMs = Date.now() - started;
  }

  private async attempt(): Promise<void> {
    this.counts.attempts++;
    let data: Record<string, string>;
    try {
      const secret = await this.options.core.readNamespacedSecret({
        namespace: this.options.namespace,
        name: `${this.options.order}-credentials`,
      });
      data = Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, decode(v)]));
    } catch (error) {
      const code = error instanceof k8s.ApiException ? `HTTP ${error.code}` : "no response";
      return this.fail({ kind: "other", message: `reading the delivered Secret: ${code}` }, "");
    }
    const username = data["username"] ?? "";
    if (username && !this.counts.usernamesSeen.includes(username)) this.counts.usernamesSeen.push(username);
    if (this.options.login) return this.record(await this.options.login(data), username);
    const transportUrl = data["transport_url"];
    if (!transportUrl)
      return this.fail({ kind: "other", message: "the delivered Secret has no transport_url" }, username);
    // A consumer may build its configuration from either form, so the two must name the same user.
    if (userOf(transportUrl) !== username) {
      return this.fail({ kind: "other", message: "transport_url and username disagree" }, username);
    }
    this.record(await amqpLogin(transportUrl, this.options.override), username);
  }

  private record(outcome: LoginOutcome, username: string): void {
    if (outcome.kind !== "ok") return this.fail(outcome, username);
    this.counts.successes++;
    this.counts.successesByUser[username] = (this.counts.successesByUser[username] ?? 0) + 1;
    this.options.onOutcome?.(outcome, username);
  }

  private fail(outcome: Exclude<LoginOutcome, { kind: "ok" }>, username: string): void {
    this.options.onOutcome?.(outcome, username);
    if (outcome.kind === "auth") this.counts.authFailures++;
    else this.counts.otherFailures++;
    const messages = this.counts.failureMessages;
    if (messages.length < 10 && !messages.includes(outcome.message)) messages.push(outcome.message);
  }
}

/** A consumer that stays connected: one AMQP connection with an open channel until close(). */
export interface HeldConnection {
  /** Resolves when the connection ends, by close() or by the broker (the user deleted). */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** Connects with `transportUrl` and keeps the connection open, as a consumer that has not reloaded. */
export async function holdConnection(transportUrl: string): Promise<HeldConnection> {
  const url = new URL(transportUrl);
  const connection = await amqp.connect(
    {
      protocol: "amqp",
      hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: Number(url.port || 5672),
      username: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      vhost: decodeURIComponent(url.pathname.slice(1)),
      heartbeat: 0,
    },
    { timeout: 5_000 },
  );
  connection.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => connection.once("close", () => resolve()));
  await connection.createChannel();
  let open = true;
  void closed.then(() => (open = false));
  return {
    closed,
    async close() {
      if (open) await connection.close().catch(() => undefined);
      await closed;
    },
  };
}
