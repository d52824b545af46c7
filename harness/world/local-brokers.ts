// The local environment's brokers (scripts/localenv/rabbitmq.sh): `rabbitmq` runs RabbitMQ 4.3 and is
// every test's broker, `rabbitmq-2` runs 3.10, `rabbitmq-40` runs 4.0, and the optional `rabbitmq-43` is a
// second 4.3 node for the benchmark's scale phase (`scripts/localenv.sh rabbitmq-43 up`). The core scenarios run on one
// node of each major (e2e/orders-operator.itest.ts, e2e/topology-operator.itest.ts, the upstream
// backend's lifecycle), so that both stay proven; what differs between 4.0 and 4.3 is tested on both
// (test/topology/rabbitmq-4x-vhosts.itest.ts and rabbitmq-4x-features.itest.ts).
import { localBrokerFromEnv, type LocalBroker } from "./managed-bus.ts";
import { localEnv } from "./env.ts";

export type LocalPart = "rabbitmq" | "rabbitmq-2" | "rabbitmq-40" | "rabbitmq-43";

export interface LocalNode {
  /** The part's name for `scripts/localenv.sh stop`. */
  part: LocalPart;
  /** RabbitMQ's version, as the node's management API reports it. */
  version: string;
  broker: LocalBroker;
  /** rabbitmqctl on the node (the wrapper `up` writes beside its state). */
  rabbitmqctl: string;
}

const PREFIX: Record<LocalPart, string> = {
  rabbitmq: "RABBITMQ_",
  "rabbitmq-2": "RABBITMQ_2_",
  "rabbitmq-40": "RABBITMQ_40_",
  "rabbitmq-43": "RABBITMQ_43_",
};

export function localNode(part: LocalPart): LocalNode {
  const env = localEnv() as unknown as Record<string, string>;
  const p = PREFIX[part];
  const read = (name: string) => env[`${p}${name}`] ?? "";
  if (read("URL") === "")
    throw new Error(`${part} does not run: start it with scripts/localenv.sh ${part} up`);
  return {
    part,
    version: read("VERSION"),
    broker: localBrokerFromEnv({
      RABBITMQ_URL: read("URL"),
      RABBITMQ_MANAGEMENT_URL: read("MANAGEMENT_URL"),
      RABBITMQ_ADMIN_USERNAME: read("ADMIN_USERNAME"),
      RABBITMQ_ADMIN_PASSWORD: read("ADMIN_PASSWORD"),
    }),
    rabbitmqctl: part === "rabbitmq" ? (env["RABBITMQCTL"] ?? "") : read("CTL"),
  };
}

/** One broker of each major, 4.3 (every test's) first, then 3.10. */
export function majors(): LocalNode[] {
  return (["rabbitmq", "rabbitmq-2"] as const).map(localNode);
}
