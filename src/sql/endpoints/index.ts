// An SQL object's endpoint, as the engine (src/external) calls what a backend talks to: which MariaDB
// server its mariaDbRef names, and the administrator's pools to each.
export * from "./pools.ts";
export * from "./registry.ts";
export * from "./resolve.ts";
export * from "./settings-password.ts";
