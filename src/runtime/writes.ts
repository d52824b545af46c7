import type { Clock } from "./clock.ts";
import { nextStatus, type DesiredCondition, type StatusWithConditions } from "./conditions.ts";
import { apiPath, apiVersionOf, type Kind, type KubeObject, type KubeRest } from "./kube-rest.ts";

export const fieldManager = "vhost-broker";

/** Server-side apply of the fields vhost-broker owns; conflicts with other managers are forced. */
export function apply<T extends KubeObject>(
  rest: KubeRest,
  kind: Kind,
  object: KubeObject,
  options: { subresource?: string; signal?: AbortSignal } = {},
): Promise<T> {
  const { name, namespace } = object.metadata ?? {};
  if (!name) throw new Error(`cannot apply a ${kind.kind} without a name`);
  const body = { ...object, apiVersion: apiVersionOf(kind), kind: kind.kind };
  return rest.request<T>("PATCH", apiPath(kind, namespace, name, options.subresource), {
    query: { fieldManager, force: true },
    // JSON is YAML, so the apply content type takes the JSON body as it is.
    contentType: "application/apply-patch+yaml",
    body,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

export interface StatusWrite {
  written: boolean;
  status: StatusWithConditions;
}

/**
 * Writes `desired` as the status of `object` through the /status subresource, only when it differs
 * from the stored status; unchanged conditions keep their lastTransitionTime.
 */
export async function writeStatus(
  rest: KubeRest,
  kind: Kind,
  object: KubeObject,
  desired: { conditions: DesiredCondition[]; [field: string]: unknown },
  clock: Clock,
  signal?: AbortSignal,
): Promise<StatusWrite> {
  const current = object.status as StatusWithConditions | undefined;
  const { status, changed } = nextStatus(current, desired, object.metadata?.generation, clock.now());
  if (!changed) return { written: false, status };
  const { name, namespace } = object.metadata ?? {};
  await apply(rest, kind, { metadata: { name, namespace }, status }, { subresource: "status", signal });
  return { written: true, status };
}
