// One pass of one object as the engine's steps share it: the kind's handler, the deps, the object as
// the pass works with it, and its key in the memo (`kind/namespace/name`).
import { TerminalError } from "../runtime/base/errors.ts";
import type { ExternalDeps } from "./deps.ts";
import type { ExternalHandler, ExternalObject } from "./handler.ts";

export interface Pass<D extends ExternalDeps, O extends ExternalObject, S, C> {
  handler: ExternalHandler<D, O, S, C>;
  deps: D;
  object: O;
  key: string;
}

/** `raw` read by the kind's schema; an object that fails it is reported, never served. */
export function parse<D extends ExternalDeps, O extends ExternalObject, S, C>(
  handler: ExternalHandler<D, O, S, C>,
  raw: unknown,
  key: string,
): O {
  const parsed = handler.schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new TerminalError(
    `${key} is not a valid ${handler.kind.kind}: ${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`,
    handler.reasons.invalidSpec,
  );
}

/** The fields of log lines about the pass's object. */
export function logFields<D extends ExternalDeps, O extends ExternalObject, S, C>(pass: Pass<D, O, S, C>) {
  const { namespace = "", name } = pass.object.metadata;
  return { kind: pass.handler.kind.kind, namespace, name };
}
