// The MariaDB-facing half of the built-in SQL controller: the SQL text, the client and what each kind
// declares, reads back and drops.
export * from "./claims.ts";
export * from "./client.ts";
export * from "./database.ts";
export * from "./errors.ts";
export * from "./grant.ts";
export * from "./password-validation.ts";
export * from "../../mariadb/sql-text.ts";
export * from "./user.ts";
export * from "./catalogue.ts";
