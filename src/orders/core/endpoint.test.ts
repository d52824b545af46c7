import { describe, expect, it } from "vitest";
import { parseEndpoint } from "./endpoint.ts";

describe("parseEndpoint", () => {
  it("parses host:port", () => {
    expect(parseEndpoint("broker.example.test:5672")).toEqual({
      ok: true,
      value: { host: "broker.example.test", port: 5672 },
    });
    expect(parseEndpoint("10.0.0.7:1")).toEqual({ ok: true, value: { host: "10.0.0.7", port: 1 } });
    expect(parseEndpoint("h:65535")).toEqual({ ok: true, value: { host: "h", port: 65535 } });
  });

  it("takes IPv6 in brackets and returns the bare address", () => {
    expect(parseEndpoint("[fd00::10]:5672")).toEqual({ ok: true, value: { host: "fd00::10", port: 5672 } });
  });

  it.each([
    ["broker.example.test", "no port"],
    ["broker.example.test:", "no port"],
    [":5672", "no host"],
    ["broker:0", 'port "0" is outside 1-65535'],
    ["broker:65536", 'port "65536" is outside 1-65535'],
    ["broker:99999999999999999999", 'port "99999999999999999999" is outside 1-65535'],
    ["broker:-1", 'port "-1" is not a decimal number'],
    ["broker:56x", 'port "56x" is not a decimal number'],
    ["broker: 5672", 'port " 5672" is not a decimal number'],
    ["fd00::10:5672", "an IPv6 address must be written in brackets"],
    ["[fd00::10:5672", "no closing bracket"],
    ["[fd00::10]5672", "no port after the bracketed address"],
    ["[broker]:5672", '"broker" in brackets is not an IPv6 address'],
    ["user@broker:5672", '"user@broker" is not a host name or address'],
    ["broker/x:5672", '"broker/x" is not a host name or address'],
  ])("refuses %j (%s)", (text, why) => {
    const result = parseEndpoint(text);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).toContain(`published messaging endpoint "${text}" is not a valid host:port: `);
      expect(result.message).toContain(why);
    }
  });
});
