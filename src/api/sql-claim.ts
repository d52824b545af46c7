// A claim on what a SQL object declares on the server, shared by the SQL controller that honours it and
// the orders that set it on their children. A Database, User or Grant carrying the claim annotation
// serves only a schema or account the controller created under that same claim (the schema's comment,
// the account's row in the catalogue): anything else of that name on the server is refused, never
// adopted, altered, granted on or dropped. The adopt annotation lets a claimed object take over an
// unmarked schema or account of exactly its name once, for children made before claims existed.

export const SQL_CLAIM_ANNOTATION = "c5c3.io/sql-claim";
export const SQL_ADOPT_ANNOTATION = "c5c3.io/sql-adopt-unmarked";

/** The schemas of the server itself, and the controller's catalogue: never declared by an object. */
export const RESERVED_SCHEMAS = [
  "mysql",
  "information_schema",
  "performance_schema",
  "sys",
  "vhost_broker",
] as const;

/** The schema holding the controller's catalogue of the accounts it created, and for which claim. */
export const CATALOGUE_SCHEMA = "vhost_broker";

export interface SqlClaim {
  /** The claim annotation's value; undefined: the object makes no claim (seed 002's plain behaviour). */
  claim?: string | undefined;
  /** An unmarked schema or account of the object's name may be taken over (and marked). */
  adoptUnmarked: boolean;
}

export function sqlClaimOf(metadata: { annotations?: Record<string, string> | undefined }): SqlClaim {
  const claim = metadata.annotations?.[SQL_CLAIM_ANNOTATION];
  return {
    claim: claim ? claim : undefined,
    adoptUnmarked: metadata.annotations?.[SQL_ADOPT_ANNOTATION] === "true",
  };
}

/** Whether `name` is a reserved schema; MariaDB compares schema names case-insensitively here. */
export function isReservedSchema(name: string): boolean {
  return (RESERVED_SCHEMAS as readonly string[]).includes(name.toLowerCase());
}
