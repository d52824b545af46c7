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
