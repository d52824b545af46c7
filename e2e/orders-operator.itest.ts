// The order's lifecycle with the operator as its users run it (`node src/main.ts`, the built-in topology
// controller serving the Vhost, User and Permission CRs), the five legs of the original scenario
// (e2e/support/order-lifecycle.ts), on RabbitMQ 4.3 and 3.10.
import { majors } from "../harness/world/local-brokers.ts";
import { describeOrderLifecycle } from "./support/order-lifecycle.ts";

for (const node of majors()) {
  describeOrderLifecycle(`the order's lifecycle, operator process, RabbitMQ ${node.version}`, {
    prefix: `ordop-${node.part.replace("rabbitmq", "r")}`,
    broker: node.broker,
  });
}
