// What the topology controller needs of Kubernetes beyond the port: Secrets read as decoded values.
import { secretKind } from "../api/index.ts";
import type { KubeObject } from "../runtime/port/kube-rest.ts";
import { secretValues } from "../rabbitmq/kube-lookup.ts";
import type { ControllerDeps } from "./deps.ts";

export interface SecretRead {
  name: string;
  resourceVersion: string;
  labels: Record<string, string>;
  /** Decoded values. */
  values: Record<string, string>;
}

export function secretRead(secret: KubeObject): SecretRead {
  return {
    name: secret.metadata?.name ?? "",
    resourceVersion: secret.metadata?.resourceVersion ?? "",
    labels: secret.metadata?.labels ?? {},
    values: secretValues(secret),
  };
}

export async function readSecret(
  deps: Pick<ControllerDeps, "kube">,
  namespace: string,
  name: string,
): Promise<SecretRead | undefined> {
  const secret = await deps.kube.get(secretKind, { namespace, name });
  return secret && secretRead(secret);
}
