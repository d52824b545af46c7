import { describe, expect, it } from "vitest";
import { boundSecret, isPartial, secretCacheBytes, sharedSecrets } from "./secret-bound.ts";

const secret = (data: Record<string, string>, annotations: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "Secret",
  type: "Opaque",
  metadata: { name: "s", namespace: "t", resourceVersion: "7", labels: { app: "x" }, annotations },
  data,
});

describe("what a Secret cache keeps of a Secret", () => {
  it("keeps a Secret within the bound whole", () => {
    const small = secret({ username: "dQ==", password: "cA==" }, { note: "n" });
    expect(boundSecret(small)).toBe(small);
    expect(isPartial(small)).toBe(false);
  });

  it("keeps a larger one without its data and annotations, marked partial, never as an empty Secret", () => {
    for (const big of [
      secret({ password: "cA==", padding: "x".repeat(secretCacheBytes) }),
      secret({ password: "cA==" }, { note: "x".repeat(secretCacheBytes) }),
    ]) {
      const kept = boundSecret(big);
      expect(kept).toEqual({
        apiVersion: "v1",
        kind: "Secret",
        type: "Opaque",
        metadata: { name: "s", namespace: "t", resourceVersion: "7", labels: { app: "x" } },
      });
      expect(isPartial(kept)).toBe(true);
      expect(isPartial(big)).toBe(false);
    }
  });

  it("counts keys and values, up to the bound itself", () => {
    const at = secret({ k: "x".repeat(secretCacheBytes - 1) });
    expect(boundSecret(at)).toBe(at);
    expect(isPartial(boundSecret(secret({ kk: "x".repeat(secretCacheBytes - 1) })))).toBe(true);
  });

  it("shares one copy of each version of a Secret among the caches of a cluster", () => {
    const version = (resourceVersion: string, padding = "") => {
      const s = secret({ password: "cA==", padding });
      return { ...s, metadata: { ...s.metadata, uid: "u1", resourceVersion } };
    };
    const shared = sharedSecrets();
    expect(shared(version("7"))).toBe(shared(version("7")));
    expect(shared(version("8"))).not.toBe(shared(version("7")));
    const big = shared(version("9", "x".repeat(secretCacheBytes)));
    expect(isPartial(big)).toBe(true);
    expect(shared(version("9", "x".repeat(secretCacheBytes)))).toBe(big);
    expect(sharedSecrets()(version("7"))).not.toBe(shared(version("7")));
  });
});
