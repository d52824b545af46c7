import { createHash } from "node:crypto";
import { realClock, type Clock } from "../base/clock.ts";
import type { KubeRest } from "../port/kube-rest.ts";

// Who may scrape /metrics, decided as controller-runtime's authentication/authorization filter does:
// the bearer token is checked with a TokenReview, and its user must be allowed `get` on the
// non-resource URL /metrics by a SubjectAccessReview. Verdicts are kept for a minute per token (by
// its hash), so that a scrape every few seconds costs the API server nothing. The token itself is
// never logged or kept.
//
// Grants and refusals are cached apart, each bounded by evicting its oldest entry: anyone can send
// random tokens, and those must neither grow the memory nor push the scraper's grant out of the cache.
// The minute is measured on the monotonic clock, so a wall clock stepped back cannot stretch it.

export type Verdict = { allowed: true } | { allowed: false; status: 401 | 403; reason: string };

const TTL_MS = 60_000;
const MAX_ENTRIES = 1000;

interface TokenReview {
  status?: {
    authenticated?: boolean;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  };
}

interface SubjectAccessReview {
  status?: { allowed?: boolean };
}

interface Cached {
  verdict: Verdict;
  /** On the monotonic clock. */
  until: number;
}

export class MetricsAuthorizer {
  private readonly rest: KubeRest;
  private readonly clock: Pick<Clock, "monotonic">;
  private readonly granted = new Map<string, Cached>();
  private readonly refused = new Map<string, Cached>();

  constructor(rest: KubeRest, clock: Pick<Clock, "monotonic"> = realClock) {
    this.rest = rest;
    this.clock = clock;
  }

  /** The verdict on an Authorization header; API failures are thrown (the caller answers 500). */
  async check(authorization: string | undefined, path: string): Promise<Verdict> {
    const token = /^Bearer (.+)$/i.exec(authorization ?? "")?.[1]?.trim();
    if (!token) return { allowed: false, status: 401, reason: "no bearer token" };
    const key = createHash("sha256").update(path).update("\0").update(token).digest("hex");
    const cached = this.granted.get(key) ?? this.refused.get(key);
    if (cached && cached.until > this.clock.monotonic()) return cached.verdict;
    const verdict = await this.review(token, path);
    const cache = verdict.allowed ? this.granted : this.refused;
    cache.delete(key);
    // A Map iterates in insertion order: the first key is the oldest entry.
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, { verdict, until: this.clock.monotonic() + TTL_MS });
    return verdict;
  }

  private async review(token: string, path: string): Promise<Verdict> {
    const review = await this.rest.request<TokenReview>(
      "POST",
      "/apis/authentication.k8s.io/v1/tokenreviews",
      { body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } } },
    );
    const user = review.status?.user;
    if (!review.status?.authenticated || !user?.username) {
      return { allowed: false, status: 401, reason: "the token is not authenticated" };
    }
    const access = await this.rest.request<SubjectAccessReview>(
      "POST",
      "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      {
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: {
            user: user.username,
            uid: user.uid,
            groups: user.groups,
            extra: user.extra,
            nonResourceAttributes: { path, verb: "get" },
          },
        },
      },
    );
    if (!access.status?.allowed) {
      return { allowed: false, status: 403, reason: `${user.username} may not get ${path}` };
    }
    return { allowed: true };
  }
}
