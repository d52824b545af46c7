// The broker-facing half of the built-in topology controller: what a controller imports.
export * from "./binding.ts";
export * from "../../rabbitmq/client.ts";
export * from "../../rabbitmq/errors.ts";
export * from "./exchange.ts";
export * from "../../rabbitmq/password.ts";
export * from "./permission.ts";
export * from "./policy.ts";
export * from "./queue.ts";
export * from "./specs.ts";
export * from "./user.ts";
export * from "./vhost.ts";
export * from "../../rabbitmq/paths.ts";
