// Grant: privileges of username@host on *.*, a database or a table. GRANT is idempotent and additive
// (seed 002): a privilege removed from the spec, or granted out of band, is named in the Ready
// message and left in place. A Grant whose account does not exist yet waits and is tried again. Nothing
// is granted to an account, or on a database, that is not the Grant's under its claim (or, without a
// claim, that carries another's): see src/api/sql-claim.ts.
import { sqlClaimOf, SqlGrantSchema, sqlGrantKind, type SqlGrant } from "../../api/index.ts";
import type { Desired } from "../../external/index.ts";
import {
  InvalidSqlValue,
  compareGrant,
  grantKey,
  NotOwnedOnServer,
  NotThereYet,
  databaseClaim,
  declareGrant,
  ownsAccount,
  accountClaim,
  grantTarget,
  privilegeName,
  readBackGrant,
  revokeGrant,
  type GrantState,
} from "../statements/index.ts";
import type { SqlServer } from "../statements/index.ts";
import type { SqlKind } from "../backend.ts";
import { pinnedReference } from "../unsupported.ts";

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

/**
 * Throws NotOwnedOnServer when the account or the database is another claim's (or, for a Grant without
 * a claim, anyone's). A claimed Grant whose account or database carries no mark yet waits (NotThereYet)
 * for its User or Database, which settle the claim and report a refusal themselves.
 */
async function checkClaim(server: SqlServer, grant: SqlGrant, state: GrantState): Promise<void> {
  const { claim } = sqlClaimOf(grant.metadata);
  const account = `'${state.username}'@'${state.host}'`;
  const recorded = await accountClaim(server, state.username, state.host);
  if (recorded !== claim) {
    if (recorded !== undefined) {
      throw new NotOwnedOnServer(`account ${account} was created for ${recorded}: nothing is granted to it`);
    }
    throw new NotThereYet(`account ${account} is not recorded for ${claim ?? ""} yet: waiting for its User`);
  }
  if (state.database === "*") {
    if (claim) throw new NotOwnedOnServer(`a claimed Grant grants on its own database only, not on *.*`);
    return;
  }
  const held = await databaseClaim(server, state.database);
  if (held !== undefined && held !== "" && held !== claim) {
    throw new NotOwnedOnServer(
      `database ${state.database} was created for ${held}: nothing is granted on it`,
    );
  }
  if (claim && held !== claim) {
    throw new NotThereYet(
      `database ${state.database} is not marked for ${claim} yet: waiting for its Database`,
    );
  }
}

function grantedMessage(state: GrantState, extra: readonly string[]): string {
  const also = extra.length
    ? `; the account also holds ${extra.join(", ")} there, which grants being additive are not revoked`
    : "";
  return `granted ${describe(state)}${also}`;
}

export const grant: SqlKind<SqlGrant, GrantState> = {
  kind: sqlGrantKind,
  schema: SqlGrantSchema,
  reference: (grant) => grant.spec.mariaDbRef,
  unsupported: (grant) => pinnedReference("spec.mariaDbRef", grant.spec.mariaDbRef),
  secretsOf: () => [],
  desired: async (_deps, grant) => grantState(grant),
  listed(catalogue, state) {
    const check = compareGrant(catalogue.privileges.get(grantKey(state)) ?? [], state);
    return check.matches ? grantedMessage(state, check.extra) : undefined;
  },
  async apply(deps, grant, state) {
    await checkClaim(deps.server, grant, state);
    let check = await readBackGrant(deps.server, state);
    const changed = check.matches ? [] : check.differences;
    if (!check.matches) {
      await declareGrant(deps.server, state);
      check = await readBackGrant(deps.server, state);
    }
    return { message: grantedMessage(state, check.extra), changed };
  },
  async remove(deps, grant) {
    const state = grantState(grant);
    if (state.outcome !== "ready") return;
    const { claim } = sqlClaimOf(grant.metadata);
    if (!(await ownsAccount(deps.server, state.spec.username, state.spec.host, claim))) return;
    await revokeGrant(deps.server, state.spec);
  },
};
