import { describe, expect, it } from "vitest";
import { asPathPrefix, managementPathPrefix } from "./additional-config.ts";

describe("management.path_prefix in additionalConfig", () => {
  it("is read from rabbitmq.conf lines, as go-ini reads the default section", () => {
    expect(managementPathPrefix("management.path_prefix = /rabbit")).toBe("/rabbit");
    expect(
      managementPathPrefix("log.console = true\n  management.path_prefix=/a/b # a comment\r\nx = 1"),
    ).toBe("/a/b");
    expect(managementPathPrefix('management.path_prefix = "/quoted"')).toBe("/quoted");
    expect(managementPathPrefix("management.path_prefix: /colon")).toBe("/colon");
  });

  it("is absent without the key, in a comment, or after a section header", () => {
    expect(managementPathPrefix(undefined)).toBe("");
    expect(managementPathPrefix("management.tcp.port = 15672")).toBe("");
    expect(managementPathPrefix("# management.path_prefix = /x")).toBe("");
    expect(managementPathPrefix("[other]\nmanagement.path_prefix = /x")).toBe("");
  });

  it("becomes one leading slash and no trailing one", () => {
    expect(asPathPrefix("")).toBe("");
    expect(asPathPrefix("/")).toBe("");
    expect(asPathPrefix("rabbit")).toBe("/rabbit");
    expect(asPathPrefix("/rabbit/")).toBe("/rabbit");
  });
});
