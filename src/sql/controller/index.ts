// The Kubernetes-facing half of the built-in SQL controller: one handler per kind over one engine,
// the table of kinds, each kind's controller with its watches, and the deps they share.
export * from "./conditions.ts";
export * from "./connection-secret.ts";
export * from "./connection.ts";
export * from "./controllers.ts";
export * from "./database.ts";
export * from "./deps.ts";
export * from "./handler.ts";
export * from "./finalizer.ts";
export * from "./grant.ts";
export * from "./kinds.ts";
export * from "./lanes.ts";
export * from "./ownership.ts";
export * from "./user.ts";
