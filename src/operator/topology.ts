// The built-in topology controller's dependencies, built from the settings: which objects it serves,
// the broker clients it shares with the order leg, its intervals, and a lane per broker.
import type { Gatekeeper } from "../gatekeeper/gatekeeper.ts";
import type { Clock } from "../runtime/base/clock.ts";
import type { EventSpec } from "../runtime/port/events.ts";
import type { Kind, KubeObject } from "../runtime/port/kube-rest.ts";
import type { BrokerConnections } from "../rabbitmq/broker-access.ts";
import { createSharedDeps, type ClusterSelection, type SharedDeps } from "../topology/index.ts";
import type { EndpointLanes, TransitionEvents } from "../external/index.ts";
import type { OperatorConfig } from "./settings.ts";

/** `all`, `none`, `names:a,ns/b` or `annotation:key[=value]`, as the topology-clusters setting reads. */
export function clusterSelection(text: string): ClusterSelection {
  if (text === "all" || text === "none") return { serve: text };
  if (text.startsWith("names:")) return { serve: "names", names: text.slice("names:".length).split(",") };
  const [annotation = "", value] = text.slice("annotation:".length).split("=", 2);
  return value === undefined ? { serve: "annotated", annotation } : { serve: "annotated", annotation, value };
}

/** `broker`: the process's clients and resolution settings, shared with the order leg (operator/broker.ts). */
export function topologyDeps(
  config: OperatorConfig,
  clock: Clock,
  broker: BrokerConnections,
  events?: TransitionEvents,
  gatekeeper?: Gatekeeper,
): SharedDeps {
  return createSharedDeps({
    ownership: {
      enabled: config["topology-controller"],
      clusters: clusterSelection(config["topology-clusters"]),
      connectionSecrets: config["topology-connection-secrets"],
    },
    resolve: broker.resolve,
    settings: {
      verificationPeriodMs: config["topology-verification-period"],
      deleteGuestUser: config["topology-delete-guest-user"],
      brokerCheckIntervalMs: config["topology-broker-check-interval"],
      secretNamespaces: config["secret-namespaces"],
      waitingRetryMs: config["connection-wait-interval"],
      transientRetryMs: config["transient-requeue-interval"],
    },
    clients: broker.clients,
    clock,
    ...(events ? { events } : {}),
    ...(gatekeeper ? { gatekeeper } : {}),
  });
}

/** A lane per broker: a broker that has not answered for half a request's deadline is slow. */
export function topologyLanes(
  config: OperatorConfig,
  record: (kind: Kind, object: KubeObject, event: EventSpec) => void,
): EndpointLanes {
  return {
    workers: config["max-concurrent-reconciles"],
    endpoints: config["topology-concurrent-brokers"],
    slowAfterMs: config["backend-request-timeout"] / 2,
    record,
  };
}
