// The workloads' acknowledgement of a switch: the pods beside the order that read its delivered Secret (a
// volume, a projected volume, env or envFrom) and were created before the switch still run with the
// superseded credential, whatever reloads them: a Secret-watching reloader and `kubectl rollout restart`
// both replace them with pods created after it. Asked only while a sweep is due (one list of the
// namespace's pods per pass on the order's cluster; the operator keeps no cache of pods).
import { podKind } from "../../api/index.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import { apiErrorText } from "./errors.ts";

interface SecretRef {
  name?: string;
}
interface Container {
  env?: { valueFrom?: { secretKeyRef?: SecretRef } }[];
  envFrom?: { secretRef?: SecretRef }[];
}
interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  ephemeralContainers?: Container[];
  volumes?: {
    secret?: { secretName?: string };
    projected?: { sources?: { secret?: SecretRef }[] };
  }[];
}

/** Whether the pod reads Secret `name` of its namespace, in any container or volume. */
export function readsSecret(pod: KubeObject, name: string): boolean {
  const spec = (pod["spec"] ?? {}) as PodSpec;
  const volumes = (spec.volumes ?? []).some(
    (v) => v.secret?.secretName === name || (v.projected?.sources ?? []).some((s) => s.secret?.name === name),
  );
  const containers = [
    ...(spec.containers ?? []),
    ...(spec.initContainers ?? []),
    ...(spec.ephemeralContainers ?? []),
  ];
  return (
    volumes ||
    containers.some(
      (c) =>
        (c.env ?? []).some((e) => e.valueFrom?.secretKeyRef?.name === name) ||
        (c.envFrom ?? []).some((e) => e.secretRef?.name === name),
    )
  );
}

/** A pod still runs unless it is being deleted or its phase says it ended. */
function running(pod: KubeObject): boolean {
  const phase = (pod["status"] as { phase?: string } | undefined)?.phase;
  return pod.metadata?.deletionTimestamp === undefined && phase !== "Succeeded" && phase !== "Failed";
}

/**
 * The running pods of `pods` that read Secret `secret` and were created before `switchedAt`, as
 * namespace/name, sorted. Both times are whole seconds: a pod created in the switch's second counts as
 * before it (it may have read the Secret before the switch).
 */
export function podsBeforeSwitch(pods: readonly KubeObject[], secret: string, switchedAt: Date): string[] {
  return (
    pods
      .filter((p) => running(p) && readsSecret(p, secret))
      // The API answers a string; a typed client's object holds a Date.
      .filter((p) => new Date(p.metadata?.creationTimestamp ?? Number.NaN).getTime() <= switchedAt.getTime())
      .map((p) => `${p.metadata?.namespace ?? ""}/${p.metadata?.name ?? ""}`)
      .sort()
  );
}

/** The pods of the order's namespace that still run with the superseded credential, or why they cannot be listed. */
export async function podsOnOldCredential(
  home: Kube,
  namespace: string,
  secret: string,
  switchedAt: Date,
): Promise<{ pods: string[] } | { failure: string }> {
  try {
    return { pods: podsBeforeSwitch(await home.list(podKind, namespace, ""), secret, switchedAt) };
  } catch (error) {
    return { failure: `listing the pods of namespace ${namespace} failed: ${apiErrorText(error)}` };
  }
}
