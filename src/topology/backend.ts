// The topology backend, the rabbitmq.com kinds' connector to the engine (src/external/): controllers
// named topology-<plural>, objects served by their rabbitmqClusterReference (ownership.ts), upstream's
// finalizer and conditions (upstream.ts), the broker resolved from the reference, declare or verify on
// it (sync.ts), its failures (failures.ts), a lane per broker, and the RabbitmqClusters and the
// labelled Secrets that wake the objects. Each kind (kinds/) supplies a TopologyKind.
import type { z } from "zod";
import { rabbitmqClusterKind, type KindRef, type ObjectMeta } from "../api/index.ts";
import { TOPOLOGY_SECRET_LABEL } from "../api/contracts.ts";
import {
  externalControllers,
  wakeByKey,
  type AnyExternalKind,
  type Connector,
  type Desired,
  type EndpointLanes,
  type ExternalKind,
  type Caches,
} from "../external/index.ts";
import type { DesiredCondition } from "../runtime/base/conditions.ts";
import type { KubeObject } from "../runtime/port/kube-rest.ts";
import type { ControllerSpec } from "../runtime/process/controller-declaration.ts";
import type { Manager } from "../runtime/process/manager.ts";
import type { WatchSpec } from "../runtime/process/controller-declaration.ts";
import { resolveBroker, type ClusterReference } from "../rabbitmq/resolve-broker.ts";
import type { ListedCheck } from "./broker/listed-compare.ts";
import type { ManagementClient, ReadBack } from "./broker/index.ts";
import { reconcileDeps, type ControllerDeps, type SharedDeps } from "./deps.ts";
import { brokerFailure } from "./failures.ts";
import { binding } from "./kinds/binding.ts";
import { exchange } from "./kinds/exchange.ts";
import { permission } from "./kinds/permission.ts";
import { policy } from "./kinds/policy.ts";
import { queue } from "./kinds/queue.ts";
import { user } from "./kinds/user.ts";
import { vhost } from "./kinds/vhost.ts";
import { decideOwnership } from "./ownership.ts";
import { fieldsOf, referencedName, type RawFields } from "./raw-fields.ts";
import { declareOrVerify } from "./sync.ts";
import { everDeclared, teardownResolution } from "./teardown-endpoint.ts";
import { topologyFinalizer } from "../rabbitmq/finalizer.ts";
import { Reason, notDeleted, notReady, ready } from "./upstream.ts";

export interface TopologyObject {
  metadata: ObjectMeta;
  spec: { rabbitmqClusterReference: ClusterReference };
  status?: unknown;
}

/** A broker as a pass uses it: its client, and the key that names it (in the memo, for the guest user). */
export interface Broker {
  client: ManagementClient;
  key: string;
}

/** The desired broker state of an object; `supersedes` runs with the broker's client. */
export type TopologyDesired<S> = Desired<S, ManagementClient>;

/** What a topology kind supplies: its schema, mapping and broker calls. */
export interface TopologyKind<O extends TopologyObject, S> {
  kind: KindRef;
  schema: z.ZodType<O>;
  /**
   * Secrets in the object's namespace it reads, besides a connectionSecret; from its spec as the cache
   * holds it, unparsed (asked of every cached object when a labelled Secret changes).
   */
  secretsOf(spec: RawFields): string[];
  /** Whether it always reads and writes Secrets in its own namespace (a User's generated credentials). */
  ownSecrets?: boolean;
  /** What else wakes its objects (a Permission's User, a Binding's ends). */
  watches?(caches: Caches): WatchSpec[];
  desired(deps: ControllerDeps, object: O): Promise<TopologyDesired<S>>;
  declare(client: ManagementClient, spec: S): Promise<void>;
  readBack(client: ManagementClient, spec: S): Promise<ReadBack>;
  /** The read back answered from the broker's listing of the verification period (sync.ts). */
  listed?: ListedCheck<S>;
  /** Deletes the broker object for a deleted resource (or leaves it, under deletionPolicy retain). */
  remove(deps: ControllerDeps, client: ManagementClient, object: O): Promise<void>;
  /** Conditions besides Ready, after the broker took the state and after it failed. */
  extraConditions?: { applied: DesiredCondition[]; failed(message: string): DesiredCondition[] };
}

/**
 * The broker of a topology object as its spec names it, resolved to a namespace as the resolver does
 * (a connectionSecret first, then the RabbitmqCluster; the object's own namespace when none is given);
 * "" for an object not cached or naming neither.
 */
export function topologyLane(object: KubeObject | undefined): string {
  const spec = object?.["spec"] as { rabbitmqClusterReference?: LaneReference } | undefined;
  const ref = spec?.rabbitmqClusterReference;
  if (!object || !ref) return "";
  const namespace = text(ref.namespace) || (object.metadata?.namespace ?? "");
  const secret = text(ref.connectionSecret?.name);
  if (secret) return `connection Secret ${namespace}/${secret}`;
  const name = text(ref.name);
  return name ? `RabbitmqCluster ${namespace}/${name}` : "";
}

interface LaneReference {
  name?: unknown;
  namespace?: unknown;
  connectionSecret?: { name?: unknown };
}

const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** Whether a topology object's rabbitmqClusterReference names this RabbitmqCluster (by name, in its namespace or the named one). */
function referencesCluster(rmq: KubeObject): (object: KubeObject) => boolean {
  const { name, namespace } = rmq.metadata ?? {};
  return (object) => {
    const ref = (
      object["spec"] as { rabbitmqClusterReference?: { name?: string; namespace?: string } } | undefined
    )?.rabbitmqClusterReference;
    return !!ref?.name && ref.name === name && (ref.namespace || object.metadata?.namespace) === namespace;
  };
}

export const topology: Connector<ControllerDeps> = {
  name: "topology",
  controller: "built-in topology controller",
  endpointName: "broker",
  reasons: { invalidSpec: Reason.InvalidSpec, outOfReach: Reason.SecretsOutOfReach },
  // The kinds' own conditions are True or False only (upstream.ts); the rest of the status is theirs.
  status: { keepOthers: true, generationAt: "status", omitEmptyMessage: true, observedOnSuccess: true },
  enabled: (deps) => deps.ownership.enabled,
  teardownReadsSecrets: true,
  outOfReachNote: "nothing is declared on the broker until it is added",
  failure: (deps, error, secrets) => {
    const failure = brokerFailure(error, deps.settings, secrets);
    if (!failure) return undefined;
    return failure.refusal
      ? { verdict: "refused", message: failure.message }
      : { verdict: "failed", message: failure.message, retryAfterMs: failure.retryAfterMs };
  },
  secretLabel: `${TOPOLOGY_SECRET_LABEL}=true`,
  quietOwnFinalizer: true,
  // The broker's readiness: the objects that reference a RabbitmqCluster wake when it changes.
  endpointObject: { kind: rabbitmqClusterKind, wakes: referencesCluster },
  lane: { of: topologyLane, words: { endpoint: "broker", reason: "BrokerSlow" } },
};

/** The engine's kind of a topology kind. */
function asExternal<O extends TopologyObject, S>(
  kind: TopologyKind<O, S>,
): ExternalKind<ControllerDeps, O, S, Broker> {
  const extra = kind.extraConditions;
  return {
    connector: topology,
    kind: kind.kind,
    schema: kind.schema,
    finalizer: topologyFinalizer(kind.kind),
    conditions: {
      ready: () => [ready(), ...(extra?.applied ?? [])],
      notReady,
      notDeleted,
      ...(extra ? { syncFailed: extra.failed } : {}),
    },
    ownership: (deps, object) =>
      decideOwnership(deps, object.spec.rabbitmqClusterReference, object.metadata.namespace ?? ""),
    // Upstream's finalizer, on every object served.
    wantsFinalizer: () => true,
    secretNamespaces: (object) => secretNamespaces(kind, object),
    secretsOf: (object) => secretsOf(kind, object),
    ...(kind.watches ? { watches: kind.watches } : {}),
    endpoint: async (deps, object) => {
      // Only a teardown has a deletionTimestamp here: the engine passes no other deleted object on.
      const deleted = object.metadata.deletionTimestamp !== undefined;
      const declared = deleted && everDeclared(object.status);
      const resolved = await resolveBroker(
        object.spec.rabbitmqClusterReference,
        object.metadata.namespace ?? "",
        deps.lookup,
        deps.resolve,
        { unlabelledSecret: declared },
      );
      const resolution = deleted ? teardownResolution(resolved, declared) : resolved;
      return resolution.outcome === "ready"
        ? {
            outcome: "ready",
            client: { client: deps.clients.client(resolution.connection), key: resolution.key },
            key: resolution.key,
          }
        : resolution;
    },
    desired: async (deps, object): Promise<Desired<S, Broker>> => {
      const desired = await kind.desired(deps, object);
      if (desired.outcome !== "ready") return desired;
      const { supersedes, ...rest } = desired;
      return supersedes ? { ...rest, supersedes: (broker: Broker) => supersedes(broker.client) } : rest;
    },
    sync: (deps, broker, object, desired, recall) =>
      declareOrVerify(kind, deps, broker, object, desired, recall),
    remove: (deps, broker, object) => kind.remove(deps, broker.client, object),
  };
}

/**
 * The namespaces whose Secrets the object needs: its broker's (the RabbitmqCluster's default-user
 * Secret, or the connection Secret) and, for a kind that keeps Secrets beside it (a User's
 * credentials), its own.
 */
function secretNamespaces<O extends TopologyObject>(
  kind: Pick<TopologyKind<O, unknown>, "secretsOf" | "ownSecrets">,
  object: O,
): string[] {
  const own = object.metadata.namespace ?? "";
  const ref = object.spec.rabbitmqClusterReference;
  const beside = kind.ownSecrets || kind.secretsOf(object.spec as unknown as RawFields).length > 0;
  return [ref.namespace || own, ...(beside ? [own] : [])];
}

/**
 * The labelled Secrets whose change wakes the object: what the kind reads beside it (a User's imported
 * credentials), and a connection Secret in the reference's namespace. Read from the object as the cache
 * holds it, without a schema: asked of every cached object of a kind on each change of a labelled
 * Secret, a parse of each would be a copy of it. An object that fails its schema names what it seems
 * to; its pass reports the schema error.
 */
function secretsOf(
  kind: Pick<TopologyKind<never, unknown>, "secretsOf">,
  object: unknown,
): { namespace: string; name: string }[] {
  const spec = fieldsOf(fieldsOf(object)?.["spec"]);
  if (!spec) return [];
  const namespace = fieldsOf(fieldsOf(object)?.["metadata"])?.["namespace"];
  const own = typeof namespace === "string" ? namespace : "";
  const reference = fieldsOf(spec["rabbitmqClusterReference"]);
  const connection = referencedName(reference?.["connectionSecret"]);
  const elsewhere = reference?.["namespace"];
  const connectionNamespace = typeof elsewhere === "string" && elsewhere !== "" ? elsewhere : own;
  return [
    ...kind.secretsOf(spec).map((name) => ({ namespace: own, name })),
    ...(connection ? [{ namespace: connectionNamespace, name: connection }] : []),
  ];
}

/** The seven kinds, by name. */
export const topologyKind = {
  vhost: asExternal(vhost),
  user: asExternal(user),
  permission: asExternal(permission),
  exchange: asExternal(exchange),
  queue: asExternal(queue),
  binding: asExternal(binding),
  policy: asExternal(policy),
};

/** In the order a first sweep should go: a permission needs its vhost, a binding its ends. */
export const topologyControllerKinds: readonly AnyExternalKind<ControllerDeps, Broker>[] = [
  topologyKind.vhost,
  topologyKind.user,
  topologyKind.permission,
  topologyKind.exchange,
  topologyKind.queue,
  topologyKind.binding,
  topologyKind.policy,
];

/**
 * The built-in topology controller in the manager: one controller per kind. `vhostWorkers`: the Vhost
 * kind's own number of workers (the others have the runtime's default); with `lanes`, that many per
 * broker.
 */
export function topologyControllers(
  manager: Caches & Pick<Manager, "kube" | "cached">,
  deps: SharedDeps,
  vhostWorkers?: number,
  lanes?: EndpointLanes,
): ControllerSpec[] {
  return externalControllers(
    manager,
    topologyControllerKinds,
    (kube, log) => reconcileDeps(deps, kube, log),
    {
      lanes,
      workers: { Vhost: vhostWorkers },
    },
  );
}

/** Passes at once of topology objects by memo key, in first-sweep order. */
export function topologyWake(manager: Pick<Manager, "enqueue">): (keys: readonly string[]) => void {
  return wakeByKey(manager, topologyControllerKinds);
}
