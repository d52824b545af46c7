// The RabbitMQVhost order's children in the ControlPlane's namespace: the Vhost CR and, per generation,
// a password Secret, a User and a Permission. Reading them (only what the order owns counts), writing
// them (server-side apply; a password Secret is created once and never rewritten) and never adopting an
// object of a child's name that the order did not create.
import { randomBytes } from "node:crypto";
import { permissionKind, secretKind, userKind, vhostKind, type KindRef } from "../../api/index.ts";
import type { KubeObject } from "../../runtime/kube-rest.ts";
import type { Kube } from "../../runtime/kube.ts";
import { decode, encode } from "../core/delivery.ts";
import {
  childStateOf,
  passwordStateOf,
  type ChildAction,
  type GenerationChildren,
  type ChildObject,
} from "../core/generations.ts";
import type { ChildPlace, ContainerOutcome, GenerationListing } from "../core/kind.ts";
import { ChildError } from "../core/provision.ts";
import { messages } from "./conditions.ts";
import {
  childLabels,
  childSelector,
  isOwnChild,
  parseChildName,
  passwordSecretLabels,
  passwordSecretName,
  permissionChildName,
  userChildName,
  userName,
  vhostChildName,
  vhostName,
  type ObjectMeta,
  type OrderIdentity,
} from "./naming.ts";

function metaOf(object: KubeObject): ObjectMeta {
  return {
    name: object.metadata?.name ?? "",
    labels: object.metadata?.labels,
    ownerReferences: object.metadata?.ownerReferences,
  };
}

const specOf = (object: KubeObject | undefined): Record<string, unknown> | undefined =>
  object?.["spec"] as Record<string, unknown> | undefined;

/**
 * Makes the Vhost CR carry the order's vhost and deletion policy. Throws ChildError for an object of that
 * name the order does not own, and the port's not-served error when the management cluster serves no Vhost.
 */
export async function applyVhost(
  kube: Kube,
  order: OrderIdentity,
  place: ChildPlace,
  _resource: string,
  deletionPolicy: "retain" | "delete",
): Promise<ContainerOutcome> {
  const name = vhostChildName(order);
  const existing = await kube.get(vhostKind, { namespace: place.namespace, name });
  if (existing && !isOwnChild(order, metaOf(existing))) {
    throw new ChildError(messages.notAdopted("Vhost", place.namespace, name));
  }
  const spec = vhostSpec(order, place.backend, deletionPolicy);
  if (existing && sameSpec(specOf(existing), spec) && hasLabels(existing, childLabels(order))) {
    return { kind: "applied", object: existing as ChildObject };
  }
  const body = { metadata: { name, namespace: place.namespace, labels: childLabels(order) }, spec };
  return { kind: "applied", object: (await kube.apply(vhostKind, body)) as ChildObject };
}

export function vhostSpec(order: OrderIdentity, rabbitmqCluster: string, deletionPolicy: string) {
  return { name: vhostName(order), deletionPolicy, rabbitmqClusterReference: { name: rabbitmqCluster } };
}

/** The fields of the Vhost spec the order applies, without the policy. */
export function pickVhostSpec(object: unknown): Record<string, unknown> {
  const spec = specOf(object as KubeObject) ?? {};
  return { name: spec["name"], rabbitmqClusterReference: spec["rabbitmqClusterReference"] };
}

function sameSpec(have: Record<string, unknown> | undefined, want: Record<string, unknown>): boolean {
  return JSON.stringify(pick(have ?? {}, Object.keys(want))) === JSON.stringify(want);
}

function pick(object: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, object[k]]));
}

function hasLabels(object: KubeObject, labels: Record<string, string>): boolean {
  return Object.entries(labels).every(([k, v]) => object.metadata?.labels?.[k] === v);
}

/** The order's Users, Permissions and password Secrets, indexed by generation. */
export interface Listing {
  users: Map<number, KubeObject>;
  permissions: Map<number, KubeObject>;
  passwords: Map<number, KubeObject>;
}

export async function listChildren(kube: Kube, order: OrderIdentity, namespace: string): Promise<Listing> {
  const selector = childSelector(order);
  const [users, permissions, secrets] = await Promise.all([
    kube.list(userKind, namespace, selector),
    kube.list(permissionKind, namespace, selector),
    kube.list(secretKind, namespace, selector),
  ]);
  const index = (items: KubeObject[], discriminator: string): Map<number, KubeObject> => {
    const out = new Map<number, KubeObject>();
    for (const item of items) {
      const meta = metaOf(item);
      const id = parseChildName(order, meta.name);
      if (id?.discriminator === discriminator && "generation" in id && isOwnChild(order, meta)) {
        out.set(id.generation, item);
      }
    }
    return out;
  };
  return {
    users: index(users, "user"),
    permissions: index(permissions, "permission"),
    passwords: index(secrets, "password"),
  };
}

/** The listing as the core reads it. */
export function generationListing(listing: Listing): GenerationListing {
  return { generations: generationsOf(listing), passwordOf: (n) => passwordOf(listing, n) };
}

/** The listing as the generation functions read it. */
export function generationsOf(listing: Listing): GenerationChildren[] {
  const generations = new Set([
    ...listing.users.keys(),
    ...listing.permissions.keys(),
    ...listing.passwords.keys(),
  ]);
  return [...generations].map((generation) => ({
    generation,
    password: passwordStateOf(
      listing.passwords.get(generation) as { data?: Record<string, string> } | undefined,
    ),
    user: childStateOf(listing.users.get(generation) as ChildObject | undefined),
    permission: childStateOf(listing.permissions.get(generation) as ChildObject | undefined),
  }));
}

/** Generation N's password from the listing ("" when absent). */
export function passwordOf(listing: Listing, generation: number): string {
  const data = listing.passwords.get(generation)?.["data"] as Record<string, string> | undefined;
  return decode(data?.["password"]);
}

/** 32 random bytes, base64url without padding: 43 characters. */
export function newPassword(): string {
  return randomBytes(32).toString("base64url");
}

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
    if (action.op === "delete") return kube.delete(secretKind, { namespace: ns, name });
    const existing = await kube.get(secretKind, { namespace: ns, name }, { live: true });
    if (existing) {
      if (!isOwnChild(order, metaOf(existing))) throw new ChildError(messages.notAdopted("Secret", ns, name));
      return; // ours already: created once, never rewritten
    }
    await kube.create(secretKind, {
      metadata: { name, namespace: ns, labels: passwordSecretLabels(order) },
      type: "Opaque",
      data: { username: encode(userName(order, n)), password: encode(newPassword()) },
    });
    return;
  }
  const [kind, name, spec] =
    action.kind === "user"
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
  if (action.op === "delete") return kube.delete(kind, { namespace: ns, name });
  await applyOwned(kube, order, kind, ns, name, spec);
}

async function applyOwned(
  kube: Kube,
  order: OrderIdentity,
  kind: KindRef,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  const existing = await kube.get(kind, { namespace, name });
  if (existing && !isOwnChild(order, metaOf(existing))) {
    throw new ChildError(messages.notAdopted(kind.kind, namespace, name));
  }
  await kube.apply(kind, { metadata: { name, namespace, labels: childLabels(order) }, spec });
}
