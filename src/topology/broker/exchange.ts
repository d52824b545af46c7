// Exchange: PUT /api/exchanges/{vhost}/{name}, with upstream's defaults (direct, not durable).
import type { z } from "zod";
import type { DeleteOutcome, ManagementClient } from "../../rabbitmq/client.ts";
import { sameJson } from "./compare.ts";
import { apiPath, withQuery } from "../../rabbitmq/paths.ts";
import { exchangeSchema } from "./schemas.ts";
import { DEFAULT_VHOST, readBack, type ExchangeSpec, type ReadBack } from "./specs.ts";

export function exchangeBody(spec: ExchangeSpec): Record<string, unknown> {
  return {
    type: spec.type ?? "direct",
    durable: spec.durable ?? false,
    auto_delete: spec.autoDelete ?? false,
    arguments: spec.arguments ?? {},
  };
}

function exchangePath(spec: Pick<ExchangeSpec, "name" | "vhost">): string {
  return apiPath("exchanges", spec.vhost ?? DEFAULT_VHOST, spec.name);
}

export async function declareExchange(client: ManagementClient, spec: ExchangeSpec): Promise<void> {
  await client.put(exchangePath(spec), exchangeBody(spec));
}

export async function deleteExchange(
  client: ManagementClient,
  spec: Pick<ExchangeSpec, "name" | "vhost">,
): Promise<DeleteOutcome> {
  return client.delete(exchangePath(spec));
}

export async function readBackExchange(client: ManagementClient, spec: ExchangeSpec): Promise<ReadBack> {
  const path = withQuery(exchangePath(spec), { columns: "name,type,durable,auto_delete,arguments" });
  return compareExchange(spec, await client.find(path, exchangeSchema));
}

/** The exchange as the broker holds it against the desired state; undefined = missing. */
export function compareExchange(
  spec: ExchangeSpec,
  actual: z.infer<typeof exchangeSchema> | undefined,
): ReadBack {
  if (!actual) return readBack(false, []);
  const desired = exchangeBody(spec);
  const differences: string[] = [];
  if (actual.type !== desired.type) differences.push("type");
  if (actual.durable !== desired.durable) differences.push("durable");
  if (actual.auto_delete !== desired.auto_delete) differences.push("autoDelete");
  if (!sameJson(actual.arguments, desired.arguments)) differences.push("arguments");
  return readBack(true, differences);
}
