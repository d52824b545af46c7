// The built-in topology controller: its connector to the engine and its controllers (backend.ts), the
// seven kinds (kinds/), and the deps they share.
export * from "./backend.ts";
export * from "./broker-checks.ts";
export * from "./deps.ts";
export * from "./kinds/binding-ends.ts";
export * from "./kinds/binding.ts";
export * from "./kinds/exchange.ts";
export * from "./kinds/permission.ts";
export * from "./kinds/policy.ts";
export * from "./kinds/queue.ts";
export * from "./kinds/user-credentials.ts";
export * from "./kinds/user.ts";
export * from "./kinds/vhost.ts";
export * from "./ownership.ts";
export * from "./raw-fields.ts";
export * from "./upstream.ts";
