// The Kubernetes-facing half of the built-in topology controller: one reconcile function per kind,
// the table a wiring iterates over, and the deps they share.
export * from "./binding.ts";
export * from "./binding-ends.ts";
export * from "./conditions.ts";
export * from "./deps.ts";
export * from "./handler.ts";
export * from "./exchange.ts";
export * from "./finalizer.ts";
export * from "./kinds.ts";
export * from "./ownership.ts";
export * from "./permission.ts";
export * from "./policy.ts";
export * from "./queue.ts";
export * from "./raw-fields.ts";
export * from "./user-credentials.ts";
export * from "./user.ts";
export * from "./vhost.ts";
