// Binding: the API gives a binding no name. Declaring POSTs (the broker ignores a binding it already
// has); deleting lists the bindings between source and destination and deletes the one with the
// same routing key and arguments by the broker's properties_key.
import type { DeleteOutcome, ManagementClient } from "../../rabbitmq/client.ts";
import { sameJson } from "./compare.ts";
import { absentOnNotFound } from "../../rabbitmq/errors.ts";
import { apiPath, encodeSegment } from "../../rabbitmq/paths.ts";
import { bindingsSchema } from "./schemas.ts";
import { DEFAULT_VHOST, readBack, type BindingSpec, type ReadBack } from "./specs.ts";

export function bindingBody(spec: BindingSpec): { routing_key: string; arguments: Record<string, unknown> } {
  return { routing_key: spec.routingKey ?? "", arguments: spec.arguments ?? {} };
}

function bindingsPath(spec: BindingSpec): string {
  const kind = spec.destinationType === "queue" ? "q" : "e";
  return apiPath("bindings", spec.vhost ?? DEFAULT_VHOST, "e", spec.source, kind, spec.destination);
}

export async function declareBinding(client: ManagementClient, spec: BindingSpec): Promise<void> {
  await client.post(bindingsPath(spec), bindingBody(spec));
}

/** The broker's properties_key of the binding, or undefined when it (or an end of it) is missing. */
export async function findBinding(client: ManagementClient, spec: BindingSpec): Promise<string | undefined> {
  const listed = await client.get(bindingsPath(spec), bindingsSchema).catch(absentOnNotFound);
  return matchingBinding(spec, listed ?? [])?.properties_key;
}

/** The binding among those between the same ends with the desired routing key and arguments. */
export function matchingBinding<B extends { routing_key: string; arguments: Record<string, unknown> }>(
  spec: BindingSpec,
  between: readonly B[],
): B | undefined {
  const desired = bindingBody(spec);
  return between.find(
    (b) => b.routing_key === desired.routing_key && sameJson(b.arguments, desired.arguments),
  );
}

export async function deleteBinding(client: ManagementClient, spec: BindingSpec): Promise<DeleteOutcome> {
  const key = await findBinding(client, spec);
  if (key === undefined) return "absent";
  // properties_key is itself percent-encoded text; as a path segment it is encoded once more.
  return client.delete(`${bindingsPath(spec)}/${encodeSegment(key)}`);
}

/** Every field of a binding is its identity: it exists and matches, or it is missing. */
export async function readBackBinding(client: ManagementClient, spec: BindingSpec): Promise<ReadBack> {
  return readBack((await findBinding(client, spec)) !== undefined, []);
}
