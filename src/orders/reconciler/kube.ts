// Thin Kubernetes access for the reconciler: typed clients per cluster, server-side apply with the one
// field manager, and error texts safe for conditions (built from the status code and the API server's
// Status reason and message only, scrubbed of the secrets the caller names).
import * as k8s from "@kubernetes/client-node";
import { scrub } from "../../runtime/redact.ts";
import type { KindRef } from "../../api/index.ts";

export const FIELD_MANAGER = "vhost-broker";

export interface Clients {
  custom: k8s.CustomObjectsApi;
  core: k8s.CoreV1Api;
}

export function clientsFor(config: k8s.KubeConfig): Clients {
  return { custom: config.makeApiClient(k8s.CustomObjectsApi), core: config.makeApiClient(k8s.CoreV1Api) };
}

export const applyOptions = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.ServerSideApply);
export const mergeOptions = k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);

export function isStatus(error: unknown, code: number): boolean {
  return error instanceof k8s.ApiException && error.code === code;
}

/**
 * A 404 from the API server is either a missing object (a Status body with reason NotFound) or a
 * resource the server does not serve at all (a plain "404 page not found").
 */
export function notServed(error: unknown): boolean {
  if (!isStatus(error, 404)) return false;
  const body = (error as k8s.ApiException<unknown>).body;
  const text = typeof body === "string" ? body : JSON.stringify(body ?? "");
  return !/"reason"\s*:\s*"NotFound"/.test(text);
}

/** A message for a condition or log: never the request, never a value it carried. */
export function apiErrorText(error: unknown, secrets: Iterable<string | undefined> = []): string {
  if (error instanceof k8s.ApiException) {
    const body = error.body as unknown;
    let detail = "";
    try {
      const parsed = (typeof body === "string" ? JSON.parse(body) : body) as
        { message?: unknown } | undefined;
      if (typeof parsed?.message === "string") detail = parsed.message;
    } catch {
      detail = "";
    }
    return scrub(detail ? `HTTP ${error.code}: ${detail}` : `HTTP ${error.code}`, secrets);
  }
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === "string") return `request failed (${code})`;
  return scrub(error instanceof Error ? error.message : String(error), secrets);
}

/** Reads a namespaced custom object; undefined when it does not exist. Rethrows anything else. */
export async function readCustom(
  custom: k8s.CustomObjectsApi,
  kind: KindRef,
  namespace: string,
  name: string,
): Promise<unknown> {
  try {
    return await custom.getNamespacedCustomObject({
      group: kind.group,
      version: kind.version,
      plural: kind.plural,
      namespace,
      name,
    });
  } catch (error) {
    if (isStatus(error, 404) && !notServed(error)) return undefined;
    throw error;
  }
}

export async function listCustom(
  custom: k8s.CustomObjectsApi,
  kind: KindRef,
  namespace: string,
  labelSelector: string,
): Promise<unknown[]> {
  const list = (await custom.listNamespacedCustomObject({
    group: kind.group,
    version: kind.version,
    plural: kind.plural,
    namespace,
    labelSelector,
  })) as { items?: unknown[] };
  return list.items ?? [];
}

/** Server-side apply of a namespaced custom object, forced, with the operator's field manager. */
export async function applyCustom(
  custom: k8s.CustomObjectsApi,
  kind: KindRef,
  body: { metadata: { name: string; namespace: string; labels?: Record<string, string> } } & Record<
    string,
    unknown
  >,
): Promise<unknown> {
  return custom.patchNamespacedCustomObject(
    {
      group: kind.group,
      version: kind.version,
      plural: kind.plural,
      namespace: body.metadata.namespace,
      name: body.metadata.name,
      body: { apiVersion: kind.apiVersion, kind: kind.kind, ...body },
      fieldManager: FIELD_MANAGER,
      force: true,
    },
    applyOptions,
  );
}

/** Deletes a namespaced custom object; a missing one counts as deleted. */
export async function deleteCustom(
  custom: k8s.CustomObjectsApi,
  kind: KindRef,
  namespace: string,
  name: string,
): Promise<void> {
  try {
    await custom.deleteNamespacedCustomObject({
      group: kind.group,
      version: kind.version,
      plural: kind.plural,
      namespace,
      name,
    });
  } catch (error) {
    if (!isStatus(error, 404)) throw error;
  }
}

export async function readSecret(
  core: k8s.CoreV1Api,
  namespace: string,
  name: string,
): Promise<k8s.V1Secret | undefined> {
  try {
    return await core.readNamespacedSecret({ namespace, name });
  } catch (error) {
    if (isStatus(error, 404)) return undefined;
    throw error;
  }
}

export async function deleteSecret(core: k8s.CoreV1Api, namespace: string, name: string): Promise<void> {
  try {
    await core.deleteNamespacedSecret({ namespace, name });
  } catch (error) {
    if (!isStatus(error, 404)) throw error;
  }
}

export const decode = (value: string | undefined): string =>
  value === undefined ? "" : Buffer.from(value, "base64").toString("utf8");
export const encode = (value: string): string => Buffer.from(value, "utf8").toString("base64");
