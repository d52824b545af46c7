import { describe, expect, it } from "vitest";
import { backupSettingsFromEnv, backupSettingsSchema } from "./settings.ts";

describe("backupSettingsSchema", () => {
  it("defaults the mount, the timeout and the Kubernetes auth details", () => {
    expect(
      backupSettingsSchema.parse({
        address: "https://openbao:8200",
        auth: { method: "kubernetes", role: "vb" },
      }),
    ).toEqual({
      address: "https://openbao:8200",
      auth: {
        method: "kubernetes",
        role: "vb",
        tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
        mountPath: "kubernetes",
      },
      mount: "kv-v2",
      timeoutMs: 5000,
    });
  });

  it("refuses another scheme, an empty token and a mount with a leading slash", () => {
    const base = { address: "http://127.0.0.1:8200", auth: { method: "token", token: "t" } };
    expect(backupSettingsSchema.safeParse(base).success).toBe(true);
    expect(backupSettingsSchema.safeParse({ ...base, address: "ftp://x" }).success).toBe(false);
    expect(backupSettingsSchema.safeParse({ ...base, auth: { method: "token", token: "" } }).success).toBe(
      false,
    );
    expect(backupSettingsSchema.safeParse({ ...base, mount: "/kv" }).success).toBe(false);
  });
});

describe("backupSettingsFromEnv", () => {
  it("reads token auth", () => {
    expect(
      backupSettingsFromEnv({ OPENBAO_ADDR: "http://127.0.0.1:8200", OPENBAO_TOKEN: "tok" }),
    ).toMatchObject({
      address: "http://127.0.0.1:8200",
      auth: { method: "token", token: "tok" },
      mount: "kv-v2",
    });
  });

  it("reads Kubernetes auth with its optional variables", () => {
    expect(
      backupSettingsFromEnv({
        OPENBAO_ADDR: "https://openbao:8200",
        OPENBAO_AUTH: "kubernetes",
        OPENBAO_ROLE: "vhost-broker",
        OPENBAO_TOKEN_FILE: "/tmp/t",
        OPENBAO_AUTH_MOUNT: "k8s",
        OPENBAO_KV_MOUNT: "secrets",
      }),
    ).toMatchObject({
      auth: { method: "kubernetes", role: "vhost-broker", tokenFile: "/tmp/t", mountPath: "k8s" },
      mount: "secrets",
    });
  });

  it("names the wrong variables without their values", () => {
    expect(() => backupSettingsFromEnv({ OPENBAO_ADDR: "nope", OPENBAO_TOKEN: "" })).toThrow(
      "invalid OpenBao settings: check OPENBAO_ADDR, OPENBAO_TOKEN",
    );
    expect(() => backupSettingsFromEnv({ OPENBAO_ADDR: "http://x", OPENBAO_AUTH: "kubernetes" })).toThrow(
      "check OPENBAO_ROLE",
    );
    const secretish = "s3cr3t-token-value";
    expect(() => backupSettingsFromEnv({ OPENBAO_ADDR: secretish, OPENBAO_TOKEN: secretish })).toThrow(
      /^(?!.*s3cr3t)/,
    );
  });
});
