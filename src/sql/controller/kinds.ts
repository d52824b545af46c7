// The four kinds as a table a wiring layer iterates over, in the order of seed 002's sweep: a Grant
// needs its account, a Connection its grant. Across kinds nothing is read: a pass that fails for want
// of another object waits and tries again (the server is the source of truth).
import type { KindRef } from "../../api/index.ts";
import type { Result } from "../../runtime/controller.ts";
import { connectionHandler } from "./connection.ts";
import { databaseHandler } from "./database.ts";
import type { SqlDeps } from "./deps.ts";
import { reconcileSqlObject, type SqlHandler, type SqlObject } from "./engine.ts";
import { grantHandler } from "./grant.ts";
import { userHandler } from "./user.ts";

export interface SqlKind {
  kind: KindRef;
  reconcile(deps: SqlDeps, namespace: string, name: string): Promise<Result>;
  /** The Secrets beside an object (as an informer holds it) whose change must re-reconcile it. */
  secretsOf(object: unknown): string[];
}

function entry<O extends SqlObject, S>(handler: SqlHandler<O, S>): SqlKind {
  return {
    kind: handler.kind,
    reconcile: (deps, namespace, name) => reconcileSqlObject(handler, deps, namespace, name),
    secretsOf(object) {
      const parsed = handler.schema.safeParse(object);
      return parsed.success ? handler.secretsOf(parsed.data) : [];
    },
  };
}

export const sqlControllerKinds: readonly SqlKind[] = [
  entry(databaseHandler),
  entry(userHandler),
  entry(grantHandler),
  entry(connectionHandler),
];
