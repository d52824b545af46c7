// Grant: privileges of username@host on *.*, a database or a table. GRANT is idempotent and additive
// (seed 002): a privilege removed from the spec, or granted out of band, is named in the Ready
// message and left in place. A Grant whose account does not exist yet waits and is tried again.
import { SqlGrantSchema, sqlGrantKind, type SqlGrant } from "../../api/index.ts";
import type { Result } from "../../runtime/controller.ts";
import {
  InvalidSqlValue,
  declareGrant,
  grantTarget,
  privilegeName,
  readBackGrant,
  revokeGrant,
  type GrantState,
} from "../server/index.ts";
import type { SqlDeps } from "./deps.ts";
import { reconcileSqlObject, type Desired, type SqlHandler } from "./engine.ts";
import { pinnedReference } from "./unsupported.ts";

export function grantState(grant: SqlGrant): Desired<GrantState> {
  const { spec } = grant;
  try {
    const state: GrantState = {
      privileges: [...new Set(spec.privileges.map(privilegeName))],
      database: spec.database ?? "*",
      table: spec.table ?? "*",
      username: spec.username,
      host: spec.host || "%",
      grantOption: spec.grantOption ?? false,
    };
    grantTarget(state.database, state.table);
    return { outcome: "ready", spec: state };
  } catch (error) {
    if (error instanceof InvalidSqlValue) return { outcome: "invalid", reason: `spec: ${error.message}` };
    throw error;
  }
}

function describe(state: GrantState): string {
  const on = state.database === "*" ? "*.*" : `${state.database}.${state.table}`;
  return `${state.privileges.join(", ")} on ${on} to '${state.username}'@'${state.host}'`;
}

export const grantHandler: SqlHandler<SqlGrant, GrantState> = {
  kind: sqlGrantKind,
  schema: SqlGrantSchema,
  reference: (grant) => grant.spec.mariaDbRef,
  unsupported: (grant) => pinnedReference("spec.mariaDbRef", grant.spec.mariaDbRef),
  secretsOf: () => [],
  desired: async (_deps, grant) => grantState(grant),
  async apply(deps, _grant, state) {
    let check = await readBackGrant(deps.server, state);
    const changed = check.matches ? [] : check.differences;
    if (!check.matches) {
      await declareGrant(deps.server, state);
      check = await readBackGrant(deps.server, state);
    }
    const extra = check.extra.length
      ? `; the account also holds ${check.extra.join(", ")} there, which grants being additive are not revoked`
      : "";
    return { message: `granted ${describe(state)}${extra}`, changed };
  },
  async remove(deps, grant) {
    const state = grantState(grant);
    if (state.outcome === "ready") await revokeGrant(deps.server, state.spec);
  },
};

export function reconcileGrant(deps: SqlDeps, namespace: string, name: string): Promise<Result> {
  return reconcileSqlObject(grantHandler, deps, namespace, name);
}
