// Exchange: type (default direct), durability (default false), auto-delete and arguments.
import { listedExchange } from "../broker/listed-compare.ts";
import { ExchangeSchema, exchangeKind, type Exchange } from "../../api/index.ts";
import {
  DEFAULT_VHOST,
  declareExchange,
  deleteExchange,
  readBackExchange,
  type ExchangeSpec,
} from "../broker/index.ts";
import type { TopologyKind } from "../backend.ts";

export function exchangeSpec(exchange: Exchange): ExchangeSpec {
  const { spec } = exchange;
  return {
    name: spec.name,
    vhost: spec.vhost ?? DEFAULT_VHOST,
    type: spec.type ?? "direct",
    durable: spec.durable ?? false,
    autoDelete: spec.autoDelete ?? false,
    arguments: spec.arguments ?? {},
  };
}

export const exchange: TopologyKind<Exchange, ExchangeSpec> = {
  kind: exchangeKind,
  schema: ExchangeSchema,
  secretsOf: () => [],
  desired: async (_deps, exchange) => ({ outcome: "ready", spec: exchangeSpec(exchange) }),
  declare: declareExchange,
  readBack: readBackExchange,
  listed: listedExchange,
  async remove(_deps, client, exchange) {
    await deleteExchange(client, exchangeSpec(exchange));
  },
};
