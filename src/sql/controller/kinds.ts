// The four kinds as a table a wiring layer iterates over, in the order of seed 002's sweep: a Grant
// needs its account, a Connection its grant. Across kinds nothing is read: a pass that fails for want
// of another object waits and tries again (the server is the source of truth).
import type { KindRef } from "../../api/index.ts";
import type { Result } from "../../runtime/loop/controller.ts";
import { connectionHandler, reconcileConnection } from "./connection.ts";
import { databaseHandler, reconcileDatabase } from "./database.ts";
import type { SqlDeps } from "./deps.ts";
import type { SqlHandler, SqlObject } from "./handler.ts";
import { grantHandler, reconcileGrant } from "./grant.ts";
import { decideOwnership, type RefSelection } from "./ownership.ts";
import { reconcileUser, userHandler } from "./user.ts";

export interface SqlKind {
  kind: KindRef;
  reconcile(deps: SqlDeps, namespace: string, name: string): Promise<Result>;
  /** The Secrets beside an object (as an informer holds it) whose change must re-reconcile it. */
  secretsOf(object: unknown): string[];
  /** Whether the controller serves the object (as an informer holds it) under `refs`. */
  serves(refs: RefSelection, object: unknown): boolean;
}

function entry<O extends SqlObject, S>(handler: SqlHandler<O, S>, reconcile: SqlKind["reconcile"]): SqlKind {
  return {
    kind: handler.kind,
    reconcile,
    secretsOf(object) {
      const parsed = handler.schema.safeParse(object);
      return parsed.success ? handler.secretsOf(parsed.data) : [];
    },
    serves(refs, object) {
      const parsed = handler.schema.safeParse(object);
      if (!parsed.success) return false;
      const namespace = parsed.data.metadata.namespace ?? "";
      return decideOwnership(refs, handler.reference(parsed.data), namespace).decision === "served";
    },
  };
}

export const sqlControllerKinds: readonly SqlKind[] = [
  entry(databaseHandler, reconcileDatabase),
  entry(userHandler, reconcileUser),
  entry(grantHandler, reconcileGrant),
  entry(connectionHandler, reconcileConnection),
];
