// Database: the schema spec.name (default metadata.name) with its character set and collation, under
// the object's claim when it makes one (src/api/sql-claim.ts). cleanupPolicy Delete drops it when the
// resource is deleted, if it is the object's own; Skip (the default) leaves it. The server's own schemas
// and the controller's catalogue are never declared.
import {
  isReservedSchema,
  SqlDatabaseSchema,
  sqlClaimOf,
  sqlDatabaseKind,
  type SqlDatabase,
} from "../../api/index.ts";
import type { Desired } from "../../external/index.ts";
import {
  InvalidSqlValue,
  charsetName,
  claimOfComment,
  compareSchema,
  declareDatabase,
  dropDatabase,
  type DatabaseState,
} from "../statements/index.ts";
import type { SqlKind } from "../backend.ts";
import { pinnedReference } from "../unsupported.ts";

export function databaseName(database: SqlDatabase): string {
  return database.spec.name || (database.metadata.name ?? "");
}

export function databaseState(database: SqlDatabase): Desired<DatabaseState> {
  const { claim, adoptUnmarked } = sqlClaimOf(database.metadata);
  const state = {
    name: databaseName(database),
    characterSet: database.spec.characterSet ?? "utf8",
    collate: database.spec.collate ?? "utf8_general_ci",
    ...(claim ? { claim, adoptUnmarked } : {}),
  };
  if (isReservedSchema(state.name)) {
    return {
      outcome: "invalid",
      reason: `spec.name: ${state.name} is the server's own schema, never declared`,
    };
  }
  try {
    charsetName(state.characterSet, "spec.characterSet");
    charsetName(state.collate, "spec.collate");
  } catch (error) {
    if (error instanceof InvalidSqlValue) return { outcome: "invalid", reason: error.message };
    throw error;
  }
  return { outcome: "ready", spec: state };
}

export const database: SqlKind<SqlDatabase, DatabaseState> = {
  kind: sqlDatabaseKind,
  schema: SqlDatabaseSchema,
  reference: (database) => database.spec.mariaDbRef,
  unsupported: (database) => pinnedReference("spec.mariaDbRef", database.spec.mariaDbRef),
  secretsOf: () => [],
  desired: async (_deps, database) => databaseState(database),
  listed(catalogue, state) {
    const row = catalogue.schemata.get(state.name);
    const ours = row !== undefined && (claimOfComment(row.comment) ?? "") === (state.claim ?? "");
    return ours && compareSchema(row, state).matches ? `database ${state.name} is up to date` : undefined;
  },
  async apply(deps, _database, state) {
    const done = await declareDatabase(deps.server, state);
    const message =
      done === "created"
        ? `created database ${state.name}`
        : done === "adopted"
          ? `database ${state.name} is marked as created for ${state.claim ?? ""}`
          : done === "altered"
            ? `altered database ${state.name} to ${state.characterSet} / ${state.collate}`
            : `database ${state.name} is up to date`;
    return { message, changed: done === "unchanged" ? [] : [done] };
  },
  async remove(deps, database) {
    const name = databaseName(database);
    if (isReservedSchema(name)) return;
    const done = await dropDatabase(deps.server, name, sqlClaimOf(database.metadata).claim);
    if (done === "notOwned") {
      const { namespace, name: object } = database.metadata;
      deps.logger.warn(
        { kind: "Database", namespace, name: object },
        `database ${name} was not created for this object: left on the server`,
      );
    }
  },
};
