// Which MariaDB server an SQL object's mariaDbRef names, and the administrator's pools to each.
export * from "./pools.ts";
export * from "./registry.ts";
export * from "./resolve.ts";
export * from "./settings-password.ts";
