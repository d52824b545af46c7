import { describe, expect, it } from "vitest";
import { parseManagementUrl } from "./client.ts";

describe("management base URL", () => {
  it("assumes http without a scheme and keeps a path as a prefix", () => {
    expect(parseManagementUrl("rabbit.ns.svc:15672")).toEqual({
      origin: "http://rabbit.ns.svc:15672",
      prefix: "",
    });
    expect(parseManagementUrl("https://rabbit:15671/mgmt/")).toEqual({
      origin: "https://rabbit:15671",
      prefix: "/mgmt",
    });
    expect(parseManagementUrl("http://127.0.0.1:15672/")).toEqual({
      origin: "http://127.0.0.1:15672",
      prefix: "",
    });
  });

  it("refuses credentials in the URL without repeating them", () => {
    expect(() => parseManagementUrl("http://admin:hunter2@rabbit:15672")).toThrow(
      /must not carry credentials/,
    );
    try {
      parseManagementUrl("http://admin:hunter2@rabbit:15672");
    } catch (err) {
      expect(String((err as Error).stack)).not.toContain("hunter2");
    }
  });

  it("refuses other schemes and garbage", () => {
    expect(() => parseManagementUrl("amqp://rabbit:5672")).toThrow(/http or https/);
    expect(() => parseManagementUrl("http://[::1")).toThrow(/not a valid URL/);
  });
});
