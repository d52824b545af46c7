// What a write to an API server writes, told from the request alone: the resource as kubectl names it
// (plural.group, or the plural of the core group), the subresource, and the verb as the API server's
// audit log names it. The write counter of docs/metrics.md is labelled with it, so that a run can tell
// an order's status write from its finalizer patch, a child's apply and an Event.

export type ApiWriteVerb = "create" | "apply" | "patch" | "update" | "delete" | "deletecollection";

export interface ApiWrite {
  resource: string;
  /** "" for the object itself. */
  subresource: string;
  verb: ApiWriteVerb;
}

const APPLY = "application/apply-patch+yaml";
const namespaceSubresources = new Set(["status", "finalize"]);

/** The write a request makes, or undefined for a read (or a path that names no resource). */
export function apiWriteOf(method: string, path: string, contentType?: string): ApiWrite | undefined {
  const target = resourceOf(path);
  if (!target) return undefined;
  const verb = verbOf(method, target.named, contentType);
  return verb && { resource: target.resource, subresource: target.subresource, verb };
}

function verbOf(method: string, named: boolean, contentType: string | undefined): ApiWriteVerb | undefined {
  switch (method) {
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return contentType === APPLY ? "apply" : "patch";
    case "DELETE":
      return named ? "delete" : "deletecollection";
    default:
      return undefined;
  }
}

function resourceOf(path: string): { resource: string; subresource: string; named: boolean } | undefined {
  const segments = path.split("?")[0]!.split("/").filter(Boolean);
  let group: string;
  let rest: string[];
  if (segments[0] === "api" && segments.length >= 3) {
    group = "";
    rest = segments.slice(2);
  } else if (segments[0] === "apis" && segments.length >= 4) {
    group = segments[1]!;
    rest = segments.slice(3);
  } else return undefined;
  // A namespace's own path (/api/v1/namespaces/{name}, with /status or /finalize) is the namespaces
  // resource; any longer one names a resource inside it.
  const namespaceItself = group === "" && rest.length === 3 && namespaceSubresources.has(rest[2]!);
  if (rest[0] === "namespaces" && rest.length >= 3 && !namespaceItself) rest = rest.slice(2);
  const [plural, name, subresource] = rest;
  if (!plural) return undefined;
  return {
    resource: group ? `${plural}.${group}` : plural,
    subresource: subresource ?? "",
    named: name !== undefined,
  };
}
