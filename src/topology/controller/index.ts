// The Kubernetes-facing half of the built-in topology controller: one reconcile function per kind,
// the table of kinds, each kind's controller with its watches and lanes, and the deps they share.
export * from "./binding.ts";
export * from "./binding-ends.ts";
export * from "./broker-checks.ts";
export * from "./conditions.ts";
export * from "./controllers.ts";
export * from "./deps.ts";
export * from "./handler.ts";
export * from "./exchange.ts";
export * from "./finalizer.ts";
export * from "./kinds.ts";
export * from "./lanes.ts";
export * from "./ownership.ts";
export * from "./permission.ts";
export * from "./policy.ts";
export * from "./queue.ts";
export * from "./raw-fields.ts";
export * from "./user-credentials.ts";
export * from "./user.ts";
export * from "./vhost.ts";
export * from "./watches.ts";
