import { describe, expect, it } from "vitest";
import { backupSettingsSchema } from "./settings.ts";

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
