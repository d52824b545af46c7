import { describe, expect, it } from "vitest";
import {
  ManagementApiError,
  ManagementNotFoundError,
  ManagementTransientError,
  errorForFailure,
  errorForStatus,
  isInequivalentRedeclare,
} from "./errors.ts";
import { scrub } from "../runtime/base/redact.ts";

const inequivalent =
  "inequivalent arg 'durable' for queue 'qc' in vhost 'tv': received 'false' but current is 'true'";

describe("management API error classification", () => {
  it("makes a 4xx a ManagementApiError with the broker's reason", () => {
    const err = errorForStatus(
      "PUT",
      "/api/queues/tv/qc",
      400,
      JSON.stringify({ error: "bad_request", reason: inequivalent }),
    );
    expect(err).toBeInstanceOf(ManagementApiError);
    expect(err).not.toBeInstanceOf(ManagementNotFoundError);
    expect(err).toMatchObject({ status: 400, reason: inequivalent, method: "PUT" });
    expect(err.message).toBe(`PUT /api/queues/tv/qc: 400 ${inequivalent}`);
  });

  it("makes a 404 a ManagementNotFoundError", () => {
    const err = errorForStatus(
      "GET",
      "/api/vhosts/x",
      404,
      '{"error":"Object Not Found","reason":"Not Found"}',
    );
    expect(err).toBeInstanceOf(ManagementNotFoundError);
    expect(err).not.toBeInstanceOf(ManagementTransientError);
  });

  it("makes a 5xx transient", () => {
    const err = errorForStatus("PUT", "/api/vhosts/x", 503, "");
    expect(err).toBeInstanceOf(ManagementTransientError);
    expect(err).toMatchObject({ kind: "server", status: 503 });
  });

  it("keeps a reason that is not JSON, shortened", () => {
    const err = errorForStatus("GET", "/api/x", 400, "x".repeat(1000)) as ManagementApiError;
    expect(err.reason.length).toBeLessThan(310);
    expect(errorForStatus("GET", "/api/x", 401, "")).toMatchObject({ reason: "HTTP 401" });
  });

  it("makes connection failures and timeouts transient", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    expect(errorForFailure("GET", "/api/x", refused, false)).toMatchObject({ kind: "connection" });
    const aborted = new DOMException("The operation was aborted due to timeout", "TimeoutError");
    expect(errorForFailure("GET", "/api/x", aborted, true)).toMatchObject({ kind: "timeout" });
    const headers = Object.assign(new Error("Headers Timeout Error"), { code: "UND_ERR_HEADERS_TIMEOUT" });
    expect(errorForFailure("GET", "/api/x", headers, false)).toMatchObject({ kind: "timeout" });
  });

  it("scrubs secrets from a failure's text", () => {
    const err = errorForFailure("GET", "/api/x", new Error("bad hunter2"), false, (t) =>
      scrub(t, ["hunter2"]),
    );
    expect(err.message).not.toContain("hunter2");
    expect(err.stack).not.toContain("hunter2");
    expect(scrub("a hunter2 b hunter2", ["hunter2", ""])).toBe("a [redacted] b [redacted]");
  });
});

describe("refused redeclare", () => {
  it("recognises the broker's inequivalent-argument reasons", () => {
    const err = (reason: string, status = 400) =>
      new ManagementApiError("PUT", "/api/queues/v/q", status, reason);
    expect(isInequivalentRedeclare(err(inequivalent))).toBe(true);
    expect(isInequivalentRedeclare(err(`406 PRECONDITION_FAILED - ${inequivalent}`, 406))).toBe(true);
    expect(isInequivalentRedeclare(err("inequivalent arg 'type' for exchange 'x' in vhost 'v'"))).toBe(true);
  });

  it("does not take other refusals for one", () => {
    expect(isInequivalentRedeclare(new ManagementApiError("PUT", "/p", 400, "vhost_not_found"))).toBe(false);
    expect(
      isInequivalentRedeclare(new ManagementTransientError("PUT", "/p", "server", inequivalent, 500)),
    ).toBe(false);
    expect(isInequivalentRedeclare(new Error(inequivalent))).toBe(false);
  });
});

describe("a reason RabbitMQ up to 4.2 HTML-escaped", () => {
  it("reads as 4.3 sends it", () => {
    const err = errorForStatus(
      "PUT",
      "/api/policies/%2F/p",
      400,
      JSON.stringify({
        error: "bad_request",
        reason:
          'Validation failed\n\n[{&lt;&lt;"foo"&gt;&gt;,&lt;&lt;"a&amp;b"&gt;&gt;}] are not recognised policy settings\n',
      }),
    );
    expect(err).toMatchObject({
      reason: 'Validation failed\n\n[{<<"foo">>,<<"a&b">>}] are not recognised policy settings\n',
    });
  });
});
