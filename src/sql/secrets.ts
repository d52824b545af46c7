// What the SQL controller needs of Kubernetes beyond the port: a Secret's key read as text.
import { secretKind } from "../api/index.ts";
import type { SqlDeps } from "./deps.ts";

export type SecretKeyRead =
  { outcome: "ready"; value: string; resourceVersion: string } | { outcome: "waiting"; reason: string };

/** The text under `key` of the Secret `name` beside the object; a missing Secret or key is a wait. */
export async function readSecretKey(
  deps: Pick<SqlDeps, "kube">,
  namespace: string,
  ref: { name?: string | undefined; key: string },
): Promise<SecretKeyRead> {
  const name = ref.name ?? "";
  if (!name) return { outcome: "waiting", reason: "a secret key reference needs a Secret name" };
  const secret = await deps.kube.get(secretKind, { namespace, name });
  if (!secret) return { outcome: "waiting", reason: `Secret ${namespace}/${name} not found` };
  const data = (secret["data"] ?? {}) as Record<string, string>;
  const encoded = data[ref.key];
  if (encoded === undefined) {
    return { outcome: "waiting", reason: `Secret ${namespace}/${name} has no key ${ref.key}` };
  }
  return {
    outcome: "ready",
    value: Buffer.from(encoded, "base64").toString("utf8"),
    resourceVersion: secret.metadata?.resourceVersion ?? "",
  };
}
