import { describe, expect, it } from "vitest";
import {
  NotFoundError,
  ReconcileTimeoutError,
  TerminalError,
  TransientError,
  classifyError,
  findError,
  isPanic,
} from "./errors.ts";

describe("classifyError", () => {
  it("names the class of each error type", () => {
    expect(classifyError(new TerminalError("bad spec", "InvalidSpec"))).toBe("terminal");
    expect(classifyError(new TransientError("broker busy"))).toBe("transient");
    expect(classifyError(new NotFoundError("gone"))).toBe("notFound");
    expect(classifyError(new Error("boom"))).toBe("unclassified");
    expect(classifyError(new ReconcileTimeoutError("slow"))).toBe("unclassified");
    expect(classifyError("a string")).toBe("unclassified");
    expect(classifyError(undefined)).toBe("unclassified");
  });

  it("looks through wrapping errors to their cause", () => {
    const wrapped = new Error("provision vhost", {
      cause: new Error("put", { cause: new TransientError("503") }),
    });
    expect(classifyError(wrapped)).toBe("transient");
    expect(findError(wrapped, TransientError)?.message).toBe("503");
    expect(findError(wrapped, TerminalError)).toBeUndefined();
  });

  it("keeps the reason of a terminal error and the retry hint of a transient one", () => {
    expect(new TerminalError("x").reason).toBe("TerminalError");
    expect(new TerminalError("x", "UnsupportedType").reason).toBe("UnsupportedType");
    expect(new TransientError("x", { retryAfterMs: 1500 }).retryAfterMs).toBe(1500);
  });
});

describe("isPanic", () => {
  it("counts programming errors and thrown non-errors, not ordinary failures", () => {
    expect(isPanic(new TypeError("x is undefined"))).toBe(true);
    expect(isPanic("thrown string")).toBe(true);
    expect(isPanic(new Error("connection refused"))).toBe(false);
    expect(isPanic(new TerminalError("bad"))).toBe(false);
  });
});
