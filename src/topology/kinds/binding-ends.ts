// The cache indexes that join Bindings and their ends, so that neither side scans the other: the
// Queues and Exchanges by broker name, and the Bindings by the broker names of their ends. Keys
// keep each field's type, so an index bucket holds every object an equality check would accept.
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import type { CacheIndex } from "../../runtime/port/object-index.ts";
import { DEFAULT_VHOST } from "../broker/index.ts";

type EndType = "queue" | "exchange";

interface BindingFields {
  vhost?: unknown;
  source?: unknown;
  destination?: unknown;
  destinationType?: unknown;
}

const specOf = (object: KubeObject) => (object["spec"] ?? {}) as { vhost?: unknown; name?: unknown };

/** The key of a broker object `name` in `vhost`, as `endsByBrokerName` files Queues and Exchanges. */
export function brokerNameKey(vhost: unknown, name: unknown): string {
  return JSON.stringify([vhost, name]);
}

/** Queues and Exchanges by their broker vhost and name. */
export const endsByBrokerName: CacheIndex = {
  name: "broker-name",
  values(object) {
    const { vhost, name } = specOf(object);
    return name === undefined ? [] : [brokerNameKey(vhost ?? DEFAULT_VHOST, name)];
  },
};

const endKey = (type: EndType, vhost: unknown, name: unknown) => JSON.stringify([type, vhost, name]);

/** The key under which `bindingsByEnd` files the Bindings that connect the Queue or Exchange `end`. */
export function bindingEndKey(end: KubeObject, type: EndType): string | undefined {
  const { vhost, name } = specOf(end);
  return name === undefined ? undefined : endKey(type, vhost ?? DEFAULT_VHOST, name);
}

/** Bindings by each end: the destination as a queue or an exchange, the source as an exchange. */
export const bindingsByEnd: CacheIndex = {
  name: "binding-end",
  values(binding) {
    const { source, destination, destinationType, ...spec } = (binding["spec"] ?? {}) as BindingFields;
    const vhost = spec.vhost ?? DEFAULT_VHOST;
    const keys: string[] = [];
    if (destination !== undefined) {
      keys.push(endKey(destinationType === "queue" ? "queue" : "exchange", vhost, destination));
    }
    if (source !== undefined) keys.push(endKey("exchange", vhost, source));
    return keys;
  },
};
