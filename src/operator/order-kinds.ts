// The order kinds this operator serves, each an order-core definition of its own leg.
import type { OrderKind } from "../orders/core/kind.ts";
import { rabbitMQVhostOrder } from "../orders/rabbitmq/kind.ts";

export const orderKinds: readonly OrderKind[] = [rabbitMQVhostOrder as unknown as OrderKind];
