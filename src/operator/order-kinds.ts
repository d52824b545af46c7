// The order kinds this operator serves, each an order-core definition of its own leg, built from the
// operator's settings: RabbitMQVhost always, MariaDBDatabase when mariadb-orders is on.
import type { MariaDBTransport } from "../mariadb/client.ts";
import type { OrderKind } from "../orders/core/kind.ts";
import type { WriteFence } from "../runtime/base/write-fence.ts";
import { mariaDBDatabaseOrder } from "../orders/mariadb/kind.ts";
import { rabbitMQVhostOrder } from "../orders/rabbitmq/kind.ts";
import type { BrokerConnections } from "../rabbitmq/broker-access.ts";
import type { OperatorConfig } from "./settings.ts";

/**
 * `fence`: asked before the writes a leg sends to a backend itself (the manager's Lease fence);
 * `broker`: the process's broker clients, shared with the topology controller (operator/broker.ts);
 * `mariadb`: the process's one way to MariaDB, shared with the SQL controller (operator/mariadb.ts).
 */
export function orderKinds(
  config: OperatorConfig,
  fence?: WriteFence,
  broker?: BrokerConnections,
  mariadb?: MariaDBTransport,
): OrderKind[] {
  return [
    rabbitMQVhostOrder({ successorCheck: config["successor-check"], broker }),
    ...(config["mariadb-orders"]
      ? [mariaDBDatabaseOrder({ fence, transport: mariadb, tenantTlsDir: config["mariadb-tenant-tls-dir"] })]
      : []),
  ];
}

/** Every order kind the operator can serve, whatever its settings. */
export const orderKindRefs = [rabbitMQVhostOrder().gvk, mariaDBDatabaseOrder().gvk];
