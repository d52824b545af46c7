// The RabbitMQVhost order's children in the ControlPlane's namespace: the Vhost CR and, per generation,
// a password Secret, a User and a Permission, read and written through the core's child functions. The
// Vhost, User and Permission are applied with the topology finalizer, which upstream's operator and the
// built-in controller name alike: a new child costs its controller no write of its own to add it.
import { permissionKind, secretKind, userKind, vhostKind } from "../../api/index.ts";
import { topologyFinalizer } from "../../rabbitmq/finalizer.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import {
  applyContainerChild,
  applyOwned,
  createPasswordSecret,
  generationListing as coreListing,
  listGenerationChildren,
  specOf,
  type GenerationPieces,
  type Listing,
} from "../core/children.ts";
import { topologyReadiness, type ChildAction } from "../core/generations.ts";
import type { ChildPlace, ContainerOutcome, GenerationListing } from "../core/kind.ts";
import { type OrderIdentity } from "../core/naming.ts";
import {
  passwordSecretLabels,
  passwordSecretName,
  permissionChildName,
  RABBITMQ_NAMING,
  userChildName,
  userName,
  vhostName,
} from "./naming.ts";

const pieces: GenerationPieces = {
  account: userKind,
  access: permissionKind,
  accessDiscriminator: "permission",
  readiness: topologyReadiness,
  backendRef: "rabbitmqClusterReference",
};

/**
 * Makes the Vhost CR carry the order's vhost and deletion policy. Throws ChildError for an object of that
 * name the order does not own, and the port's not-served error when the management cluster serves no Vhost.
 */
export async function applyVhost(
  kube: Kube,
  order: OrderIdentity,
  place: ChildPlace,
  deletionPolicy: "retain" | "delete",
): Promise<ContainerOutcome> {
  const target = {
    kind: vhostKind,
    namespace: place.namespace,
    name: place.container,
    finalizers: [topologyFinalizer(vhostKind)],
  };
  return applyContainerChild(
    kube,
    RABBITMQ_NAMING,
    order,
    target,
    vhostSpec(order, place.backend, deletionPolicy),
  );
}

export function vhostSpec(order: OrderIdentity, rabbitmqCluster: string, deletionPolicy: string) {
  return { name: vhostName(order), deletionPolicy, rabbitmqClusterReference: { name: rabbitmqCluster } };
}

/** The fields of the Vhost spec the order applies, without the policy. */
export function pickVhostSpec(object: unknown): Record<string, unknown> {
  const spec = specOf(object as Parameters<typeof specOf>[0]) ?? {};
  return { name: spec["name"], rabbitmqClusterReference: spec["rabbitmqClusterReference"] };
}

export function listChildren(kube: Kube, order: OrderIdentity, namespace: string): Promise<Listing> {
  return listGenerationChildren(kube, RABBITMQ_NAMING, order, namespace, pieces);
}

/** The listing as the core reads it. */
export const generationListing = (listing: Listing): GenerationListing => coreListing(listing, pieces);

const ALL = ".*";

/** Performs one action of the generation plan. Throws ChildError for a foreign object of that name. */
export async function performAction(
  kube: Kube,
  order: OrderIdentity,
  place: ChildPlace,
  action: ChildAction,
): Promise<void> {
  const n = action.generation;
  const ns = place.namespace;
  if (action.kind === "passwordSecret") {
    const name = passwordSecretName(order, n);
    if (action.op === "delete")
      return kube.delete(secretKind, { namespace: ns, name }, { quiet: action.quiet });
    const target = { namespace: ns, name, labels: passwordSecretLabels(order) };
    return createPasswordSecret(kube, RABBITMQ_NAMING, order, target, userName(order, n));
  }
  const [kind, name, spec] =
    action.kind === "account"
      ? ([
          userKind,
          userChildName(order, n),
          {
            importCredentialsSecret: { name: passwordSecretName(order, n) },
            rabbitmqClusterReference: { name: place.backend },
          },
        ] as const)
      : ([
          permissionKind,
          permissionChildName(order, n),
          {
            vhost: vhostName(order),
            user: userName(order, n),
            permissions: { configure: ALL, write: ALL, read: ALL },
            rabbitmqClusterReference: { name: place.backend },
          },
        ] as const);
  if (action.op === "delete") return kube.delete(kind, { namespace: ns, name }, { quiet: action.quiet });
  const finalizers = [topologyFinalizer(kind)];
  await applyOwned(kube, RABBITMQ_NAMING, order, { kind, namespace: ns, name, finalizers }, spec);
}
