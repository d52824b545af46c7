import { isApiStatus, type KubeRest } from "../runtime/port/kube-rest.ts";

// Whether a cluster serves a kind, from its discovery document (readable by any authenticated user).

/** The cluster answered, and does not serve the kind. */
export class KindNotServedError extends Error {
  override name = "KindNotServedError";
}

interface ResourceList {
  resources?: { name?: string }[];
}

/** Resolves when `kind` is served on the cluster; otherwise throws an error that says which is missing. */
export async function requireServedKind(
  rest: KubeRest,
  kind: { group: string; version: string; plural: string },
): Promise<void> {
  const groupVersion = `${kind.group}/${kind.version}`;
  let list: ResourceList;
  try {
    list = await rest.request<ResourceList>("GET", `/apis/${groupVersion}`);
  } catch (error) {
    if (!isApiStatus(error, 404)) throw error;
    throw new KindNotServedError(
      `the cluster does not serve ${groupVersion} (install the CRD of ${kind.plural}.${kind.group})`,
      {
        cause: error,
      },
    );
  }
  if (!list.resources?.some((r) => r.name === kind.plural)) {
    throw new KindNotServedError(`the cluster serves ${groupVersion} but not ${kind.plural}`);
  }
}

/** Resolves when the cluster serves at least one of `kinds`; otherwise throws naming what each lacks. */
export async function requireAnyServedKind(
  rest: KubeRest,
  kinds: readonly { group: string; version: string; plural: string }[],
): Promise<void> {
  const missing: string[] = [];
  for (const kind of kinds) {
    try {
      await requireServedKind(rest, kind);
      return;
    } catch (error) {
      if (!(error instanceof KindNotServedError)) throw error;
      missing.push(error.message);
    }
  }
  throw new Error(missing.join("; "));
}
