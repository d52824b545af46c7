import { describe, expect, it } from "vitest";
import { apiPath, encodeSegment, withQuery } from "./paths.ts";

describe("management API paths", () => {
  it("encodes the default vhost as %2F", () => {
    expect(apiPath("vhosts", "/")).toBe("/api/vhosts/%2F");
    expect(apiPath("permissions", "/", "app")).toBe("/api/permissions/%2F/app");
  });

  it("keeps reserved characters of a name inside its segment", () => {
    expect(encodeSegment("a+b%c")).toBe("a%2Bb%25c");
    expect(encodeSegment("q#1?x=y&z")).toBe("q%231%3Fx%3Dy%26z");
    expect(encodeSegment("it's (new)*!")).toBe("it%27s%20%28new%29%2A%21");
    expect(encodeSegment("ünï")).toBe("%C3%BCn%C3%AF");
  });

  it("leaves ordinary names readable and encodes dot segments", () => {
    expect(encodeSegment("orders.v1-x_y~z")).toBe("orders.v1-x_y~z");
    expect(encodeSegment(".")).toBe("%2E");
    expect(encodeSegment("..")).toBe("%2E%2E");
  });

  it("adds only the defined query parameters", () => {
    expect(withQuery("/api/queues/%2F/q", { "if-empty": "true", "if-unused": undefined })).toBe(
      "/api/queues/%2F/q?if-empty=true",
    );
    expect(withQuery("/api/queues/%2F/q", { "if-unused": undefined })).toBe("/api/queues/%2F/q");
  });
});
