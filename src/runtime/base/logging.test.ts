import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, reconcileLogger } from "./logging.ts";
import { REDACTED, redact, redactString } from "./redact.ts";

function captured() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: createLogger({ level: "trace", destination }), text: () => lines.join("") };
}

const password = "hunter2-Sup3rS3cret";
const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: t
  cluster: {server: "https://10.0.0.1"}
users:
- name: admin
  user:
    client-key-data: QUJDREVGR0g=
    token: kube-token-abc123
`;

describe("log redaction", () => {
  it("never writes a password, transport URL, token or kubeconfig, wherever it appears", async () => {
    const { log, text } = captured();
    log.info({ password, user: "alice" }, "created user");
    log.info(
      { secret: { data: { transport_url: `rabbit://alice:${password}@rabbit:5672/vh` } } },
      "delivered",
    );
    log.info(`connecting to amqp://alice:${password}@127.0.0.1:5672/vh`);
    log.warn({ detail: `rabbit://alice:${password}@rabbit-0:5672,alice:${password}@rabbit-1:5672/` }, "x");
    log.info({ headers: { Authorization: "Bearer kube-token-abc123" } }, "request");
    log.info({ note: "auth with Bearer kube-token-abc123 failed" }, "note");
    log.info({ kubeconfig }, "registered cluster");
    log.info({ data: kubeconfig }, "secret content");
    log.error(new Error(`PUT http://admin:${password}@broker:15672/api/users failed`), "reconcile failed");
    log.error({ err: new Error("failed", { cause: new Error(`token: kube-token-abc123`) }) }, "wrapped");
    reconcileLogger(log, { controller: "c", cluster: "", namespace: "n", name: "x" })
      .child({ url: `amqps://alice:${password}@h/` })
      .info("child binding");
    const out = text();
    expect(out).not.toContain(password);
    expect(out).not.toContain("kube-token-abc123");
    expect(out).not.toContain("QUJDREVGR0g=");
    expect(out).toContain(REDACTED);
    // Everything else stays readable.
    expect(out).toContain('"user":"alice"');
    expect(out).toContain("rabbit-0:5672");
    expect(out).toContain("reconcile failed");
    expect(out.trim().split("\n")).toHaveLength(11);
  });

  it("writes one JSON object per line with the reconcile context", () => {
    const { log, text } = captured();
    reconcileLogger(log, { controller: "orders", cluster: "t1", namespace: "ns", name: "o1" }).info("pass");
    const line = JSON.parse(text()) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: "info",
      controller: "orders",
      cluster: "t1",
      namespace: "ns",
      name: "o1",
    });
    expect(line.reconcileID).toMatch(/^[0-9a-f-]{36}$/);
    expect(line.msg).toBe("pass");
  });

  it("leaves harmless values alone and keeps empty secret fields visible as empty", () => {
    expect(redact({ name: "a", count: 3, password: "" })).toEqual({ name: "a", count: 3, password: "" });
    expect(redactString("https://example.com/path?x=1")).toBe("https://example.com/path?x=1");
    const circular: Record<string, unknown> = { a: 1 };
    circular.self = circular;
    expect(redact(circular)).toEqual({ a: 1, self: "[Circular]" });
  });

  it("lets a string without @, :, = or whitespace through, and still redacts each secret form", () => {
    for (const plain of ["bench-scale-q-1", "tokenpassword", "-----BEGIN", "bearerabc", "a,b;c/d"])
      expect(redactString(plain)).toBe(plain);
    expect(redactString("amqp://u:p@h")).toBe(`amqp://${REDACTED}@h`);
    expect(redactString("x,u:p@h2")).toBe(`x,${REDACTED}@h2`);
    expect(redactString("Bearer abc")).toBe(`Bearer ${REDACTED}`);
    expect(redactString("token=abc")).toBe(`token=${REDACTED}`);
    expect(redactString("-----BEGIN RSA PRIVATE KEY-----\nabc")).toBe(REDACTED);
    expect(redactString("kind: Config\nusers:")).toBe(REDACTED);
  });
});
