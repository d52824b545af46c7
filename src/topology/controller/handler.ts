// The seven topology kinds as handlers of the engine of resources outside Kubernetes
// (src/external/): what every kind shares (ownership by rabbitmqClusterReference, upstream's
// finalizer, the broker resolved from the reference, declare-or-verify on the broker, its failures and
// upstream's conditions), around what each kind supplies in a KindHandler: its schema, mapping and
// broker calls.
import type { z } from "zod";
import type { KindRef, ObjectMeta } from "../../api/index.ts";
import {
  type ConditionUpdate,
  type Desired,
  type ExternalHandler,
  type ReadyDesired,
  type Recall,
  type Synced,
} from "../../external/index.ts";
import { resolveBroker, type ClusterReference } from "../../rabbitmq/resolve-broker.ts";
import { deleteGuestUser, type ManagementClient, type ReadBack } from "../broker/index.ts";
import {
  Reason,
  nextStatus,
  notDeleted,
  notReady,
  ready,
  type Condition,
  type StatusFields,
} from "./conditions.ts";
import type { ControllerDeps } from "./deps.ts";
import { brokerFailure } from "./failures.ts";
import type { ListedCheck } from "../broker/listed-compare.ts";
import { verifyOnBroker } from "./verification.ts";
import { finalizerName } from "./finalizer.ts";
import { everDeclared, teardownResolution } from "./teardown-endpoint.ts";
import { decideOwnership } from "./ownership.ts";
import type { RawFields } from "./raw-fields.ts";

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

export interface KindHandler<O extends TopologyObject, S> {
  kind: KindRef;
  schema: z.ZodType<O>;
  /**
   * Secrets in the object's namespace it reads, besides a connectionSecret; from its spec as the cache
   * holds it, unparsed (asked of every cached object when a labelled Secret changes).
   */
  secretsOf(spec: RawFields): string[];
  /** Whether it always reads and writes Secrets in its own namespace (a User's generated credentials). */
  ownSecrets?: boolean;
  desired(deps: ControllerDeps, object: O): Promise<TopologyDesired<S>>;
  declare(client: ManagementClient, spec: S): Promise<void>;
  readBack(client: ManagementClient, spec: S): Promise<ReadBack>;
  /** The read back answered from the broker's listing of the verification period (verification.ts). */
  listed?: ListedCheck<S>;
  /** Deletes the broker object for a deleted resource (or leaves it, under deletionPolicy retain). */
  remove(deps: ControllerDeps, client: ManagementClient, object: O): Promise<void>;
  /** Conditions besides Ready, after the broker took the state and after it failed. */
  extraConditions?: { applied: ConditionUpdate[]; failed(message: string): ConditionUpdate[] };
}

export type TopologyHandler<O extends TopologyObject, S> = ExternalHandler<ControllerDeps, O, S, Broker>;

/** The engine's handler of a topology kind. */
export function topologyHandler<O extends TopologyObject, S>(kind: KindHandler<O, S>): TopologyHandler<O, S> {
  const extra = kind.extraConditions;
  return {
    kind: kind.kind,
    schema: kind.schema,
    controller: "built-in topology controller",
    endpointName: "broker",
    finalizer: finalizerName(kind.kind),
    reasons: { invalidSpec: Reason.InvalidSpec, outOfReach: Reason.SecretsOutOfReach },
    conditions: {
      ready: () => [ready(), ...(extra?.applied ?? [])],
      notReady,
      notDeleted,
      ...(extra ? { syncFailed: extra.failed } : {}),
      // The kinds' own conditions are True or False only (conditions.ts); the status is theirs.
      next: (current, updates, generation, nowMs, success) =>
        nextStatus(
          current as StatusFields | undefined,
          updates as readonly Omit<Condition, "lastTransitionTime">[],
          new Date(nowMs),
          success && { generation, ...success },
        ),
    },
    enabled: (deps) => deps.ownership.enabled,
    ownership: (deps, object) =>
      decideOwnership(deps, object.spec.rabbitmqClusterReference, object.metadata.namespace ?? ""),
    // Upstream's finalizer, on every object served.
    wantsFinalizer: () => true,
    secretNamespaces: (object) => secretNamespaces(kind, object),
    teardownReadsSecrets: true,
    outOfReachNote: "nothing is declared on the broker until it is added",
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
    failure: (deps, error, secrets) => {
      const failure = brokerFailure(error, deps.settings, secrets);
      if (!failure) return undefined;
      return failure.refusal
        ? { verdict: "refused", message: failure.message }
        : { verdict: "failed", message: failure.message, retryAfterMs: failure.retryAfterMs };
    },
  };
}

/**
 * The namespaces whose Secrets the object needs: its broker's (the RabbitmqCluster's default-user
 * Secret, or the connection Secret) and, for a kind that keeps Secrets beside it (a User's
 * credentials), its own.
 */
function secretNamespaces<O extends TopologyObject>(
  kind: Pick<KindHandler<O, unknown>, "secretsOf" | "ownSecrets">,
  object: O,
): string[] {
  const own = object.metadata.namespace ?? "";
  const ref = object.spec.rabbitmqClusterReference;
  const beside = kind.ownSecrets || kind.secretsOf(object.spec as unknown as RawFields).length > 0;
  return [ref.namespace || own, ...(beside ? [own] : [])];
}

/**
 * Declares what the broker does not hold yet, or verifies what it should hold: a state applied by this
 * process is read back and declared again on drift; a Ready object this process has no memo of (after a
 * restart) is read back before anything is declared, so a broker that holds it already costs a read,
 * not a write.
 */
async function declareOrVerify<O extends TopologyObject, S>(
  kind: KindHandler<O, S>,
  deps: ControllerDeps,
  broker: Broker,
  object: O,
  desired: ReadyDesired<S, Broker>,
  recall: Recall,
): Promise<Synced> {
  const { client } = broker;
  const log = { kind: kind.kind.kind, namespace: object.metadata.namespace, name: object.metadata.name };
  deps.state.brokers.reached(deps, client);
  await deleteGuestWhenDue(deps, client, broker.key, deps.clock.monotonic());
  const restarted = !recall.known && !desired.supersedes && recall.readyAtGeneration;
  const check =
    recall.known || restarted ? await verifyOnBroker(kind, deps, client, desired.spec) : undefined;
  if (recall.known && check && !check.matches) {
    deps.logger.info(
      { ...log, exists: check.exists, differences: check.differences },
      "drift: declaring again",
    );
    await kind.declare(client, desired.spec);
  } else if (!recall.known && !check?.matches) {
    await kind.declare(client, desired.spec);
    deps.logger.info(log, "declared on the broker");
    if (desired.supersedes) {
      await desired.supersedes(broker);
      deps.logger.info(log, "removed what the declaration replaces");
    }
  }
  return {
    ...(check?.listedAt === undefined ? {} : { verifiedAt: check.listedAt }),
    ...(recall.known && check?.exists === false ? { missing: true } : {}),
  };
}

/** Seed 000: a definitions import on node boot brings `guest` back; each verification removes it. */
async function deleteGuestWhenDue(
  deps: ControllerDeps,
  client: ManagementClient,
  brokerKey: string,
  now: number,
): Promise<void> {
  if (!deps.settings.deleteGuestUser) return;
  const last = deps.state.guestDeletedAt.get(brokerKey);
  if (last !== undefined && now - last < deps.settings.verificationPeriodMs) return;
  deps.state.guestDeletedAt.set(brokerKey, now);
  try {
    const outcome = await deleteGuestUser(client);
    if (outcome === "deleted") deps.logger.info({ broker: brokerKey }, "deleted the broker's guest user");
  } catch (error) {
    // Not this object's failure: the next verification tries again.
    deps.state.guestDeletedAt.delete(brokerKey);
    const message = error instanceof Error ? error.message : String(error);
    deps.logger.warn({ broker: brokerKey, error: message }, "deleting the guest user failed");
  }
}
