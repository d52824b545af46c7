// User: the account spec.name@spec.host (defaults metadata.name and '%'), its password from
// passwordSecretKeyRef (sent as its hash, or as itself to a server that validates passwords) or
// passwordHashSecretKeyRef, its connection limit (0: unlimited) and REQUIRE X509. A new value in the password Secret is the rotation path: the next pass
// alters the account. Without a password source the account is created locked.
import { sqlClaimOf, SqlUserSchema, sqlUserKind, type SqlUser } from "../../api/index.ts";
import type { Desired } from "../../external/index.ts";
import {
  InvalidSqlValue,
  accountKey,
  compareUser,
  checkedNativeHash,
  declareUser,
  dropUser,
  nativePasswordHash,
  type UserState,
} from "../statements/index.ts";
import type { SqlDeps } from "../deps.ts";
import type { SqlKind } from "../backend.ts";
import { readSecretKey } from "../secrets.ts";
import { firstOf, optionalSecret, pinnedReference } from "../unsupported.ts";

export function userAccount(user: SqlUser): { name: string; host: string } {
  return { name: user.spec.name || (user.metadata.name ?? ""), host: user.spec.host || "%" };
}

async function userDesired(deps: SqlDeps, user: SqlUser): Promise<Desired<UserState>> {
  const { spec } = user;
  const namespace = user.metadata.namespace ?? "";
  const { claim, adoptUnmarked } = sqlClaimOf(user.metadata);
  const base = {
    ...userAccount(user),
    ...(claim ? { claim, adoptUnmarked } : {}),
    maxUserConnections: spec.maxUserConnections ?? 0,
    requireX509: spec.require?.x509 === true,
  };
  const ref = spec.passwordSecretKeyRef ?? spec.passwordHashSecretKeyRef;
  if (!ref) return { outcome: "ready", spec: base };
  const read = await readSecretKey(deps, namespace, ref);
  if (read.outcome !== "ready") return read;
  // An empty password would make an account no client can log in to (MariaDB stores none for it).
  if (!read.value)
    return { outcome: "waiting", reason: `Secret ${namespace}/${ref.name} holds an empty ${ref.key}` };
  let passwordHash: string;
  try {
    passwordHash = spec.passwordSecretKeyRef ? nativePasswordHash(read.value) : checkedNativeHash(read.value);
  } catch (error) {
    if (!(error instanceof InvalidSqlValue)) throw error;
    return { outcome: "invalid", reason: `spec.passwordHashSecretKeyRef: ${error.message}` };
  }
  return {
    outcome: "ready",
    spec: { ...base, passwordHash, ...(spec.passwordSecretKeyRef ? { password: read.value } : {}) },
    secretVersion: read.resourceVersion,
    secrets: [read.value, passwordHash],
  };
}

export const user: SqlKind<SqlUser, UserState> = {
  kind: sqlUserKind,
  schema: SqlUserSchema,
  reference: (user) => user.spec.mariaDbRef,
  unsupported({ spec }) {
    const plugin = spec.passwordPlugin;
    return firstOf(
      pinnedReference("spec.mariaDbRef", spec.mariaDbRef),
      plugin?.pluginNameSecretKeyRef || plugin?.pluginArgSecretKeyRef ? "spec.passwordPlugin" : undefined,
      spec.require?.ssl === true ? "spec.require.ssl" : undefined,
      spec.require?.issuer ? "spec.require.issuer" : undefined,
      spec.require?.subject ? "spec.require.subject" : undefined,
      optionalSecret("spec.passwordSecretKeyRef", spec.passwordSecretKeyRef),
      optionalSecret("spec.passwordHashSecretKeyRef", spec.passwordHashSecretKeyRef),
    );
  },
  secretsOf: ({ spec }) =>
    [spec.passwordSecretKeyRef?.name, spec.passwordHashSecretKeyRef?.name].filter((n): n is string => !!n),
  desired: userDesired,
  listed(catalogue, state) {
    const row = catalogue.users.get(accountKey(state.name, state.host));
    return compareUser(row, state).matches ? `user '${state.name}'@'${state.host}' is up to date` : undefined;
  },
  async apply(deps, _user, state) {
    const done = await declareUser(deps.server, state);
    const account = `'${state.name}'@'${state.host}'`;
    const message =
      done === "created"
        ? `created user ${account}`
        : done === "altered"
          ? `altered user ${account}`
          : done === "adopted"
            ? `user ${account} is recorded as created for ${state.claim ?? ""}`
            : `user ${account} is up to date`;
    return { message, changed: done === "unchanged" ? [] : [done] };
  },
  async remove(deps, user) {
    const { name, host } = userAccount(user);
    const done = await dropUser(deps.server, name, host, sqlClaimOf(user.metadata).claim);
    if (done === "notOwned") {
      const { namespace, name: object } = user.metadata;
      deps.logger.warn(
        { kind: "User", namespace, name: object },
        `account '${name}'@'${host}' was not created for this object: left on the server`,
      );
    }
  },
};
