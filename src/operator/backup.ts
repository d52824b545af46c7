// The OpenBao backup's settings, from the operator's: errors name the setting, never its value.
import { backupSettingsSchema, type BackupSettings } from "../backup/settings.ts";
import { SettingsError } from "../runtime/process/settings.ts";
import type { OperatorConfig } from "./settings.ts";

const settingOf: Record<string, string> = {
  address: "openbao-address",
  "auth.token": "openbao-token",
  "auth.role": "openbao-role",
  "auth.tokenFile": "openbao-token-file",
  "auth.mountPath": "openbao-auth-mount",
  mount: "openbao-mount",
  timeoutMs: "backend-request-timeout",
};

export function backupSettings(config: OperatorConfig): BackupSettings {
  const auth =
    config["openbao-auth"] === "kubernetes"
      ? {
          method: "kubernetes" as const,
          role: config["openbao-role"],
          tokenFile: config["openbao-token-file"],
          mountPath: config["openbao-auth-mount"],
        }
      : { method: "token" as const, token: config["openbao-token"] };
  const result = backupSettingsSchema.safeParse({
    address: config["openbao-address"],
    auth,
    mount: config["openbao-mount"],
    timeoutMs: config["backend-request-timeout"],
  });
  if (result.success) return result.data;
  const wrong = [...new Set(result.error.issues.map((i) => settingOf[i.path.join(".")] ?? i.path.join(".")))];
  throw new SettingsError(
    `invalid setting ${wrong.join(", ")}: required for openbao-auth=${config["openbao-auth"]}`,
  );
}
