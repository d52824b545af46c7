// The engine of the built-in controllers of resources outside Kubernetes (a RabbitMQ broker's, a
// MariaDB server's): one reconcile pass for every kind, the contract each backend and kind supplies,
// the controllers, lanes and period snapshots, the deps and memo every backend shares.
export { outOfReach } from "./claim.ts";
export * from "./controllers.ts";
export * from "./deps.ts";
export * from "./engine.ts";
export * from "./kind.ts";
export * from "./lanes.ts";
export { endpointLost } from "./lost.ts";
export * from "./memo.ts";
export { refusalBackoffMs } from "./retry.ts";
export * from "./snapshot.ts";
export * from "./status.ts";
