import { createHash } from "node:crypto";
import type { KubeRest } from "./kube-rest.ts";

// Who may scrape /metrics, decided as controller-runtime's authentication/authorization filter does:
// the bearer token is checked with a TokenReview, and its user must be allowed `get` on the
// non-resource URL /metrics by a SubjectAccessReview. Verdicts are kept for a minute per token (by
// its hash), so that a scrape every few seconds costs the API server nothing. The token itself is
// never logged or kept.

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

export class MetricsAuthorizer {
  private readonly rest: KubeRest;
  private readonly now: () => number;
  private readonly verdicts = new Map<string, { verdict: Verdict; until: number }>();

  constructor(rest: KubeRest, now: () => number = Date.now) {
    this.rest = rest;
    this.now = now;
  }

  /** The verdict on an Authorization header; API failures are thrown (the caller answers 500). */
  async check(authorization: string | undefined, path: string): Promise<Verdict> {
    const token = /^Bearer (.+)$/i.exec(authorization ?? "")?.[1]?.trim();
    if (!token) return { allowed: false, status: 401, reason: "no bearer token" };
    const key = createHash("sha256").update(path).update("\0").update(token).digest("hex");
    const cached = this.verdicts.get(key);
    if (cached && cached.until > this.now()) return cached.verdict;
    const verdict = await this.review(token, path);
    if (this.verdicts.size >= MAX_ENTRIES) this.verdicts.clear();
    this.verdicts.set(key, { verdict, until: this.now() + TTL_MS });
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
