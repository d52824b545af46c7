// One pass of one object as the engine's steps share it: the object's kind (and through it its
// backend's connector), the deps, the object as the pass works with it, and its key in the memo
// (`kind/namespace/name`).
import { TerminalError } from "../runtime/base/errors.ts";
import type { ExternalDeps } from "./deps.ts";
import type { ExternalKind, ExternalObject } from "./kind.ts";

export interface Pass<D extends ExternalDeps, O extends ExternalObject, S, C> {
  kind: ExternalKind<D, O, S, C>;
  deps: D;
  object: O;
  key: string;
}

/** `raw` read by the kind's schema; an object that fails it is reported, never served. */
export function parse<D extends ExternalDeps, O extends ExternalObject, S, C>(
  kind: ExternalKind<D, O, S, C>,
  raw: unknown,
  key: string,
): O {
  const parsed = kind.schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new TerminalError(
    `${key} is not a valid ${kind.kind.kind}: ${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`,
    kind.connector.reasons.invalidSpec,
  );
}

/** The fields of log lines about the pass's object. */
export function logFields<D extends ExternalDeps, O extends ExternalObject, S, C>(pass: Pass<D, O, S, C>) {
  const { namespace = "", name } = pass.object.metadata;
  return { kind: pass.kind.kind.kind, namespace, name };
}
