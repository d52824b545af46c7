// Settings of the OpenBao backup: where it is, how the operator logs in, and which KV v2 mount it
// writes to.
import { z } from "zod";

export const DEFAULT_SERVICE_ACCOUNT_TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token";

const mountPath = z
  .string()
  .regex(
    /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/,
    "a mount path is slash-separated names without a leading slash",
  );

export const backupSettingsSchema = z.object({
  /** OpenBao's address, e.g. https://openbao.openbao.svc:8200 */
  address: z.url({ protocol: /^https?$/ }),
  auth: z.discriminatedUnion("method", [
    z.object({ method: z.literal("token"), token: z.string().min(1) }),
    z.object({
      method: z.literal("kubernetes"),
      role: z.string().min(1),
      /** The service-account token presented at login; read again at every login, as kubelet rotates it. */
      tokenFile: z.string().min(1).default(DEFAULT_SERVICE_ACCOUNT_TOKEN_FILE),
      /** Where the Kubernetes auth method is mounted. */
      mountPath: mountPath.default("kubernetes"),
    }),
  ]),
  /** The KV v2 mount. */
  mount: mountPath.default("kv-v2"),
  /** Per request. */
  timeoutMs: z.number().int().positive().default(5_000),
});

export type BackupSettings = z.infer<typeof backupSettingsSchema>;
export type BackupSettingsInput = z.input<typeof backupSettingsSchema>;

/**
 * Reads the settings from the environment: OPENBAO_ADDR, OPENBAO_KV_MOUNT, and either OPENBAO_TOKEN or
 * OPENBAO_AUTH=kubernetes with OPENBAO_ROLE (OPENBAO_TOKEN_FILE, OPENBAO_AUTH_MOUNT optional). Errors name
 * the variables, never their values.
 */
export function backupSettingsFromEnv(env: Record<string, string | undefined>): BackupSettings {
  const method = env.OPENBAO_AUTH ?? "token";
  const auth =
    method === "kubernetes"
      ? {
          method,
          role: env.OPENBAO_ROLE,
          tokenFile: env.OPENBAO_TOKEN_FILE || undefined,
          mountPath: env.OPENBAO_AUTH_MOUNT || undefined,
        }
      : { method, token: env.OPENBAO_TOKEN };
  const result = backupSettingsSchema.safeParse({
    address: env.OPENBAO_ADDR,
    auth,
    mount: env.OPENBAO_KV_MOUNT || undefined,
  });
  if (result.success) return result.data;
  const names: Record<string, string> = {
    address: "OPENBAO_ADDR",
    "auth.method": "OPENBAO_AUTH",
    "auth.token": "OPENBAO_TOKEN",
    "auth.role": "OPENBAO_ROLE",
    "auth.tokenFile": "OPENBAO_TOKEN_FILE",
    "auth.mountPath": "OPENBAO_AUTH_MOUNT",
    mount: "OPENBAO_KV_MOUNT",
  };
  const wrong = result.error.issues.map((i) => names[i.path.join(".")] ?? i.path.join("."));
  throw new Error(`invalid OpenBao settings: check ${[...new Set(wrong)].join(", ")}`);
}
