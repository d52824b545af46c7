// The built-in SQL controller: its connector to the engine and its controllers (backend.ts), the four
// kinds (kinds/), and the deps they share.
export * from "./backend.ts";
export * from "./deps.ts";
export * from "./kinds/connection-secret.ts";
export * from "./kinds/connection.ts";
export * from "./kinds/database.ts";
export * from "./kinds/grant.ts";
export * from "./kinds/user.ts";
export * from "./ownership.ts";
