// The order's container children (the Vhost CR, the Database CR), one per backend the order is on. An
// order starts on one backend, under the container's base name; a migration to another backend (the
// ControlPlane names another RabbitmqCluster or MariaDB) makes a second one beside it, named after that
// backend, because a container's backend reference is immutable and the old one must stay while users on
// the old backend are in use. A container on a backend no generation's child names any more is released
// under the order's deletion policy (Retain keeps the resource on that backend, Delete removes it).
import { createHash } from "node:crypto";
import type { KindRef } from "../../api/index.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import { isNotServed, type Kube } from "../../runtime/port/kube.ts";
import { backendNamedBy, metaOf } from "./children.ts";
import { apiErrorText } from "./errors.ts";
import type { OrderDeps } from "./deps.ts";
import type { Backend, ChildPlace, GenerationListing, OrderKind } from "./kind.ts";
import {
  childAnnotations,
  childLabels,
  childSelector,
  isOwnChild,
  type OrderIdentity,
  type OrderKey,
} from "./naming.ts";

/** A container child of the order and the backend its spec names. */
export interface PlacedContainer {
  object: KubeObject;
  name: string;
  backend: string | undefined;
}

/** `<base>-<8 hex of the backend's name>`: the container on a backend the order moved to. */
export function movedContainerName(base: string, backend: string): string {
  return `${base}-${createHash("sha256").update(backend, "utf8").digest("hex").slice(0, 8)}`;
}

const movedSuffix = /^-[0-9a-f]{8}$/;

/** Whether `name` is one of the order's container names (the base, or the base and a backend's hash). */
export function isContainerName(base: string, name: string): boolean {
  return name === base || (name.startsWith(base) && movedSuffix.test(name.slice(base.length)));
}

/**
 * The container's name on `backend`: the one the order already has there, else the base name while no
 * container holds it, else the name after the backend. Two passes that list the same containers agree.
 */
export function containerNameOn(
  base: string,
  backend: string,
  containers: readonly PlacedContainer[],
): string {
  const there = containers.find((c) => c.backend === backend);
  if (there) return there.name;
  return containers.some((c) => c.name === base) ? movedContainerName(base, backend) : base;
}

/**
 * The order's containers in the ControlPlane's namespace, by labels and name (none when the kind is not
 * served). Not by the recorded uid: a container carries no credential, and one an earlier order of this
 * identity left is taken over when applied and removed when released, as a teardown does.
 */
export async function listContainers<B extends Backend>(
  kind: OrderKind<B>,
  kube: Kube,
  order: OrderIdentity,
  namespace: string,
): Promise<PlacedContainer[]> {
  let items: KubeObject[];
  try {
    items = await kube.list(kind.container.gvk, namespace, childSelector(kind.naming, order));
  } catch (error) {
    if (isNotServed(error)) return [];
    throw error;
  }
  const base = kind.container.name(order);
  return items
    .filter(
      (i) =>
        isContainerName(base, i.metadata?.name ?? "") &&
        isOwnChild(kind.naming, { ...order, uid: undefined }, metaOf(i)),
    )
    .map((object) => ({
      object,
      name: object.metadata?.name ?? "",
      backend: backendNamedBy(object, kind.container.backendRef),
    }));
}

/** The policy could not be written onto a container, which is therefore not deleted. */
export class PolicyNotWritten extends Error {
  override name = "PolicyNotWritten";
}

/**
 * Deletes one container under `policy`: the policy's fields are written onto it first when it carries
 * others (the whole spec, labels and uid annotation again, so that no field is dropped), and it is deleted
 * once its operator has taken the policy up (`settled`; without a ControlPlane, at once). Returns whether
 * the delete was issued; a container already being deleted counts as issued. A policy that cannot be
 * written leaves the container alone (PolicyNotWritten): deleting it could apply a policy the order no
 * longer names.
 */
export async function releaseContainer<B extends Backend>(
  kind: OrderKind<B>,
  kube: Kube,
  order: OrderKey,
  container: KubeObject,
  policy: "retain" | "delete",
  waitForSettled: boolean,
): Promise<boolean> {
  const namespace = container.metadata?.namespace ?? "";
  const name = container.metadata?.name ?? "";
  if (container.metadata?.deletionTimestamp) return true;
  const fields = kind.container.policy(policy);
  const spec = (container["spec"] ?? {}) as Record<string, unknown>;
  let current = container;
  if (Object.entries(fields).some(([field, value]) => spec[field] !== value)) {
    try {
      current = await kube.apply(kind.container.gvk as KindRef, {
        metadata: {
          name,
          namespace,
          labels: childLabels(kind.naming, order),
          annotations: childAnnotations(kind.naming, order),
        },
        spec: { ...kind.container.spec(container), ...fields },
      });
    } catch (error) {
      throw new PolicyNotWritten(apiErrorText(error), { cause: error });
    }
  }
  if (waitForSettled && !(kind.container.settled?.(current) ?? true)) return false;
  await kube.delete(kind.container.gvk, { namespace, name });
  return true;
}

/**
 * Releases, under the order's deletion policy, each container on a backend that neither the ControlPlane
 * nor any listed generation's account or access child names any more (a migration's old backend, once
 * its users are swept). A failure is logged; the next pass tries again.
 */
export async function releaseContainers<B extends Backend>(
  kind: OrderKind<B>,
  deps: OrderDeps,
  order: OrderIdentity,
  pass: {
    place: ChildPlace;
    containers: readonly PlacedContainer[];
    listing: GenerationListing;
    policy: "retain" | "delete";
  },
): Promise<void> {
  const { place, containers, listing, policy } = pass;
  const inUse = new Set([place.backend, ...listing.generations.map((c) => c.backend)]);
  for (const container of containers) {
    if (container.name === place.container || inUse.has(container.backend)) continue;
    try {
      if (await releaseContainer(kind, deps.management, order, container.object, policy, true))
        deps.log.info(
          { order: keyOf(order), container: container.name, backend: container.backend, policy },
          `released the ${kind.container.gvk.kind} CR on a backend the order left`,
        );
    } catch (error) {
      deps.log.warn(
        { order: keyOf(order), container: container.name },
        `releasing the ${kind.container.gvk.kind} CR on a backend the order left failed: ${apiErrorText(error)}`,
      );
    }
  }
}

const keyOf = (o: OrderKey) => ({ cluster: o.cluster, namespace: o.namespace, name: o.name });
