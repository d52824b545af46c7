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
import type { ControllerDeps } from "./deps.ts";
import { topologyHandler, type KindHandler } from "./handler.ts";
import type { Result } from "../../runtime/loop/controller.ts";
import { reconcileWith } from "../../external/index.ts";

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

export const exchangeHandler: KindHandler<Exchange, ExchangeSpec> = {
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

export function reconcileExchange(deps: ControllerDeps, namespace: string, name: string): Promise<Result> {
  return reconcileWith(topologyHandler, exchangeHandler, deps, namespace, name);
}
