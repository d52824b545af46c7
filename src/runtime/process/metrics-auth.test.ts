import { describe, expect, it } from "vitest";
import type { KubeRest } from "../port/kube-rest.ts";
import { MetricsAuthorizer } from "./metrics-auth.ts";

/** An API server that knows one token, whose user may get /metrics; it counts the TokenReviews. */
function apiServer() {
  const reviewed: string[] = [];
  const rest = {
    request: async (_method: string, path: string, options: { body: { spec: { token?: string } } }) => {
      if (path.endsWith("/tokenreviews")) {
        const token = options.body.spec.token ?? "";
        reviewed.push(token);
        return token === "scraper"
          ? { status: { authenticated: true, user: { username: "system:serviceaccount:mon:scraper" } } }
          : { status: { authenticated: false } };
      }
      return { status: { allowed: true } };
    },
  } as unknown as KubeRest;
  return { rest, reviewed };
}

function monotonic(start = 0) {
  let t = start;
  return { monotonic: () => t, advance: (ms: number) => (t += ms) };
}

describe("MetricsAuthorizer's cache", () => {
  it("keeps a verdict for a minute of monotonic time", async () => {
    const api = apiServer();
    const clock = monotonic();
    const authorizer = new MetricsAuthorizer(api.rest, clock);
    expect(await authorizer.check("Bearer scraper", "/metrics")).toEqual({ allowed: true });
    clock.advance(59_000);
    expect(await authorizer.check("Bearer scraper", "/metrics")).toEqual({ allowed: true });
    expect(api.reviewed).toEqual(["scraper"]);
    clock.advance(2_000);
    await authorizer.check("Bearer scraper", "/metrics");
    expect(api.reviewed).toEqual(["scraper", "scraper"]);
  });

  it("does not let random tokens push a grant out, and bounds the refusals it keeps", async () => {
    const api = apiServer();
    const authorizer = new MetricsAuthorizer(api.rest, monotonic());
    await authorizer.check("Bearer scraper", "/metrics");
    for (let i = 0; i < 1500; i++) {
      expect((await authorizer.check(`Bearer random-${i}`, "/metrics")).allowed).toBe(false);
    }
    expect(await authorizer.check("Bearer scraper", "/metrics")).toEqual({ allowed: true });
    expect(api.reviewed.filter((t) => t === "scraper")).toHaveLength(1);
    // The newest refusal is still cached; the oldest was evicted and is reviewed again.
    await authorizer.check("Bearer random-1499", "/metrics");
    await authorizer.check("Bearer random-0", "/metrics");
    expect(api.reviewed.filter((t) => t === "random-1499")).toHaveLength(1);
    expect(api.reviewed.filter((t) => t === "random-0")).toHaveLength(2);
  });
});
