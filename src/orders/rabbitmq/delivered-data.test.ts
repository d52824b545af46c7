import { describe, expect, it } from "vitest";
import {
  DELIVERED_KEYS,
  deliveredData,
  escapeUserinfo,
  escapeVhost,
  transportUrl,
} from "./delivered-data.ts";

describe("transportUrl", () => {
  it("matches the reference vector", () => {
    expect(transportUrl({ username: "u", password: "p@ss:w/rd", host: "host", port: 5672, vhost: "" })).toBe(
      "rabbit://u:p%40ss%3Aw%2Frd@host:5672/",
    );
  });

  it("builds the URL of a generated user and vhost unchanged", () => {
    const password = "aB3_-x".repeat(7) + "Q";
    expect(
      transportUrl({
        username: "workflow-cebe0e7a-v1",
        password,
        host: "rabbitmq.openstack.svc",
        port: 5672,
        vhost: "workflow-cebe0e7a",
      }),
    ).toBe(`rabbit://workflow-cebe0e7a-v1:${password}@rabbitmq.openstack.svc:5672/workflow-cebe0e7a`);
  });

  it("brackets an IPv6 host", () => {
    expect(transportUrl({ username: "u", password: "p", host: "fd00::1", port: 5672, vhost: "v" })).toBe(
      "rabbit://u:p@[fd00::1]:5672/v",
    );
    expect(transportUrl({ username: "u", password: "p", host: "fe80::1%eth0", port: 1, vhost: "v" })).toBe(
      "rabbit://u:p@[fe80::1%25eth0]:1/v",
    );
  });

  it("carries no $ and no , whatever the names hold", () => {
    const url = transportUrl({
      username: "u$x,y",
      password: "p$$,@:/%#",
      host: "h",
      port: 5672,
      vhost: "v$,;",
    });
    expect(url).toBe("rabbit://u%24x%2Cy:p%24%24%2C%40%3A%2F%25%23@h:5672/v%24%2C%3B");
    expect(url).not.toMatch(/[$,]/);
  });
});

describe("escapeUserinfo (Go's url.UserPassword, and $ and , besides)", () => {
  it("keeps unreserved characters and the sub-delims but $ and ,", () => {
    const kept = "AZaz09-_.~&+;=";
    expect(escapeUserinfo(kept)).toBe(kept);
  });

  it("encodes $ (oslo.config's interpolation) and , (oslo.messaging's host separator)", () => {
    expect(escapeUserinfo("a$b,c")).toBe("a%24b%2Cc");
    expect(escapeUserinfo("$$")).toBe("%24%24");
  });

  it("escapes @ / ? : and everything else with upper-case hex", () => {
    expect(escapeUserinfo("@/?:")).toBe("%40%2F%3F%3A");
    expect(escapeUserinfo(" !\"#%'()*[]\\^`{|}<>")).toBe(
      "%20%21%22%23%25%27%28%29%2A%5B%5D%5C%5E%60%7B%7C%7D%3C%3E",
    );
    expect(escapeUserinfo("\u007f\n")).toBe("%7F%0A");
  });

  it("escapes each UTF-8 byte of non-ASCII", () => {
    expect(escapeUserinfo("é")).toBe("%C3%A9");
    expect(escapeUserinfo("€")).toBe("%E2%82%AC");
    expect(escapeUserinfo("😀")).toBe("%F0%9F%98%80");
  });
});

describe("escapeVhost", () => {
  it("keeps a segment's characters and escapes / and ?", () => {
    expect(escapeVhost("workflow-cebe0e7a")).toBe("workflow-cebe0e7a");
    expect(escapeVhost("/")).toBe("%2F");
    expect(escapeVhost("a:b@c&+=")).toBe("a:b@c&+=");
    expect(escapeVhost("a?b c#%")).toBe("a%3Fb%20c%23%25");
  });

  it("escapes $ (oslo.config), , and ; (Python's urlparse cuts ;params off the path)", () => {
    expect(escapeVhost("a$b,c;d")).toBe("a%24b%2Cc%3Bd");
  });
});

describe("deliveredData", () => {
  it("holds the six keys with the URL and its parts", () => {
    const data = deliveredData({ username: "u", password: "p@ss:w/rd", host: "::1", port: 5672, vhost: "v" });
    expect(Object.keys(data)).toEqual([...DELIVERED_KEYS]);
    expect(data).toEqual({
      transport_url: "rabbit://u:p%40ss%3Aw%2Frd@[::1]:5672/v",
      host: "::1",
      port: "5672",
      username: "u",
      password: "p@ss:w/rd",
      vhost: "v",
    });
  });
});
