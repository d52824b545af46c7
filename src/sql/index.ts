// The built-in SQL controller: its connector to the engine and its controllers (backend.ts), the four
// kinds (kinds/), and the deps they share. Their statements on MariaDB are in statements/, the server
// each object's mariaDbRef names (its endpoint) in endpoints/.
export * from "./backend.ts";
export * from "./deps.ts";
export * from "./kinds/connection-secret.ts";
export * from "./kinds/connection.ts";
export * from "./kinds/database.ts";
export * from "./kinds/grant.ts";
export * from "./kinds/user.ts";
export * from "./ownership.ts";
