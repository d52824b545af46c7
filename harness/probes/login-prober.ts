// A consumer of a delivered Secret, as a tenant's service is one: before every connection it reads
// `<order>-credentials` from the Kubernetes API again, connects over AMQP with the transport_url it
// holds, declares a queue, publishes one message to it and consumes it back, then closes. It counts what
// happened, so that a test can claim "no failed login across rotations" from real connections, with
// every permission a consumer needs (configure, write, read) exercised. Nothing it records carries a
// password.
import { randomBytes } from "node:crypto";
import * as k8s from "@kubernetes/client-node";
import amqp from "amqplib";

export type LoginOutcome =
  { kind: "ok" } | { kind: "auth"; message: string } | { kind: "other"; message: string };

/** Where to connect instead of the delivered host and port (only for a Secret naming an unreachable one). */
export interface EndpointOverride {
  host: string;
  port: number;
}

/** How long one probe may take, from the TCP connect to the close. */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * Is this failure the broker refusing the credentials or what they may do? ACCESS_REFUSED (403) is a
 * refused login or, on a channel, a refused configure, write or read; NOT_ALLOWED (530) a refused vhost.
 * amqplib 2.x drops the reply text of a connection.close sent in answer to connection.open ("Expected
 * ConnectionOpenOk; got <ConnectionClose channel:0>"): RabbitMQ sends that close only to refuse the
 * vhost (530 NOT_ALLOWED, "access to vhost 'v' refused for user 'u'" or "vhost v not found"). A socket
 * closed during the handshake ("Socket closed abruptly", a broker going down) is not a refusal.
 */
function isRefusal(message: string): boolean {
  return /ACCESS.REFUSED|NOT.ALLOWED/.test(message) || OPEN_REFUSED.test(message);
}

const OPEN_REFUSED = /Expected ConnectionOpenOk; got <ConnectionClose/;

/** amqplib's message, with a refused connection.open said in words. */
function explain(message: string): string {
  return OPEN_REFUSED.test(message)
    ? `the broker refused the vhost (connection.close in answer to connection.open, 530 NOT_ALLOWED): ${message}`
    : message;
}

type Step = "connect" | "channel" | "declare" | "publish" | "consume" | "close";

/**
 * One consumer's round trip with an oslo.messaging transport_url (`rabbit://user:pass@host:port/vhost`):
 * connect and open the vhost, open a confirm channel, declare a server-named exclusive auto-delete queue
 * (configure), publish one message to it through the default exchange and wait for the broker's confirm
 * (write), get it back (read), close. The broker refusing any of it (the credentials, the vhost, a
 * permission) is an authentication failure ("auth"); anything else (the network, a broker going down, a
 * timeout) is another failure. Messages name the step and have the password removed.
 */
export async function amqpLogin(transportUrl: string, override?: EndpointOverride): Promise<LoginOutcome> {
  let password = "";
  let step: Step = "connect";
  // The broker's reason for closing the channel or the connection: the operation under way then often
  // fails with only "Channel closed".
  let cause: string | undefined;
  let connection: amqp.ChannelModel | undefined;
  let timer: NodeJS.Timeout | undefined;
  // Set when the probe timed out: a connection that opens after it is closed at once.
  let abandoned = false;
  const clean = (message: string) => (password ? message.split(password).join("***") : message);
  try {
    const url = new URL(transportUrl);
    if (url.protocol !== "rabbit:") return { kind: "other", message: `unexpected scheme ${url.protocol}` };
    password = decodeURIComponent(url.password);
    const probe = async (): Promise<void> => {
      connection = await amqp.connect(
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
      connection.on("error", (error: Error) => (cause ??= error.message));
      if (abandoned) {
        await connection.close().catch(() => undefined);
        return;
      }
      step = "channel";
      const channel = await connection.createConfirmChannel();
      channel.on("error", (error: Error) => (cause ??= error.message));
      step = "declare";
      const { queue } = await channel.assertQueue("", { exclusive: true, autoDelete: true, durable: false });
      step = "publish";
      const token = randomBytes(8).toString("hex");
      channel.publish("", queue, Buffer.from(token));
      await channel.waitForConfirms();
      step = "consume";
      for (;;) {
        const message = await channel.get(queue, { noAck: true });
        if (message && message.content.toString() === token) break;
        if (message) throw new Error(`consumed a message that was not the probe's`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      step = "close";
      await channel.close();
      await connection.close();
      connection = undefined;
    };
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)),
        PROBE_TIMEOUT_MS,
      );
    });
    const running = probe();
    // After a time-out the probe is left to end on its own; the connection is closed below or after it.
    running.catch(() => undefined);
    await Promise.race([running, timeout]);
    return { kind: "ok" };
  } catch (error) {
    const thrown = error instanceof Error ? error.message : String(error);
    // The broker's reply code in what failed says it all; otherwise the close that caused it does.
    const reason = cause && !/\d{3} \(/.test(thrown) ? `${cause} (${thrown})` : thrown;
    const message = clean(`${step}: ${explain(reason)}`);
    return isRefusal(reason) ? { kind: "auth", message } : { kind: "other", message };
  } finally {
    clearTimeout(timer);
    abandoned = true;
    if (connection) await connection.close().catch(() => undefined);
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
  /** Probes the broker refused: the credentials, the vhost or a permission (ACCESS_REFUSED, NOT_ALLOWED). */
  authFailures: number;
  /** Every other failure: the Secret unreadable or inconsistent, the network, a broker going down. */
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
