// The order's children in the ControlPlane's namespace: the Vhost CR and, per generation, a password
// Secret, a User and a Permission. Reading them (only what the order owns counts), writing them (server-side
// apply; a password Secret is created once and never rewritten) and never adopting an object of a child's
// name that the order did not create.
import { randomBytes } from "node:crypto";
import type * as k8s from "@kubernetes/client-node";
import { permissionKind, userKind, vhostKind, type KindRef } from "../../api/index.ts";
import { messages } from "../conditions.ts";
import {
  childStateOf,
  passwordStateOf,
  type ChildAction,
  type GenerationChildren,
  type TopologyChildObject,
} from "../generations.ts";
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
} from "../naming.ts";
import {
  FIELD_MANAGER,
  applyCustom,
  deleteCustom,
  deleteSecret,
  decode,
  encode,
  listCustom,
  readCustom,
  readSecret,
  type Clients,
} from "./kube.ts";

/** Where the children go: the ControlPlane's namespace and the RabbitmqCluster they name. */
export interface ChildPlace {
  namespace: string;
  rabbitmqCluster: string;
}

/** A child-level failure that VhostReady reports as VhostError. */
export class ChildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ChildError";
  }
}

export interface KubeObject extends TopologyChildObject {
  metadata?: TopologyChildObject["metadata"] & {
    name?: string;
    labels?: Record<string, string>;
    ownerReferences?: ObjectMeta["ownerReferences"];
  };
  spec?: Record<string, unknown>;
}

function metaOf(object: {
  metadata?: {
    name?: string;
    labels?: Record<string, string>;
    ownerReferences?: ObjectMeta["ownerReferences"];
  };
}): ObjectMeta {
  return {
    name: object.metadata?.name ?? "",
    labels: object.metadata?.labels,
    ownerReferences: object.metadata?.ownerReferences,
  };
}

export type VhostOutcome = { kind: "notServed" } | { kind: "applied"; object: KubeObject };

/**
 * Makes the Vhost CR carry the order's vhost and deletion policy. Throws ChildError for an object of that
 * name the order does not own; returns notServed when the management cluster serves no Vhost kind.
 */
export async function applyVhost(
  clients: Clients,
  order: OrderIdentity,
  place: ChildPlace,
  deletionPolicy: "retain" | "delete",
  notServed: (error: unknown) => boolean,
): Promise<VhostOutcome> {
  const name = vhostChildName(order);
  let existing: KubeObject | undefined;
  try {
    existing = (await readCustom(clients.custom, vhostKind, place.namespace, name)) as KubeObject | undefined;
  } catch (error) {
    if (notServed(error)) return { kind: "notServed" };
    throw error;
  }
  if (existing && !isOwnChild(order, metaOf(existing))) {
    throw new ChildError(messages.notAdopted("Vhost", place.namespace, name));
  }
  const spec = {
    name: vhostName(order),
    deletionPolicy,
    rabbitmqClusterReference: { name: place.rabbitmqCluster },
  };
  if (existing && sameSpec(existing.spec, spec) && hasLabels(existing, childLabels(order))) {
    return { kind: "applied", object: existing };
  }
  const body = { metadata: { name, namespace: place.namespace, labels: childLabels(order) }, spec };
  return { kind: "applied", object: (await applyCustom(clients.custom, vhostKind, body)) as KubeObject };
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
  passwords: Map<number, k8s.V1Secret>;
}

export async function listChildren(
  clients: Clients,
  order: OrderIdentity,
  namespace: string,
): Promise<Listing> {
  const selector = childSelector(order);
  const [users, permissions, secrets] = await Promise.all([
    listCustom(clients.custom, userKind, namespace, selector),
    listCustom(clients.custom, permissionKind, namespace, selector),
    clients.core.listNamespacedSecret({ namespace, labelSelector: selector }),
  ]);
  const index = <T extends { metadata?: unknown }>(items: T[], discriminator: string): Map<number, T> => {
    const out = new Map<number, T>();
    for (const item of items) {
      const meta = metaOf(item as KubeObject);
      const id = parseChildName(order, meta.name);
      if (id?.discriminator === discriminator && "generation" in id && isOwnChild(order, meta)) {
        out.set(id.generation, item);
      }
    }
    return out;
  };
  return {
    users: index(users as KubeObject[], "user"),
    permissions: index(permissions as KubeObject[], "permission"),
    passwords: index(secrets.items, "password"),
  };
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
    password: passwordStateOf(listing.passwords.get(generation)),
    user: childStateOf(listing.users.get(generation)),
    permission: childStateOf(listing.permissions.get(generation)),
  }));
}

/** Generation N's password from the listing ("" when absent). */
export function passwordOf(listing: Listing, generation: number): string {
  return decode(listing.passwords.get(generation)?.data?.["password"]);
}

/** 32 random bytes, base64url without padding: 43 characters. */
export function newPassword(): string {
  return randomBytes(32).toString("base64url");
}

const ALL = ".*";

/** Performs one action of the generation plan. Throws ChildError for a foreign object of that name. */
export async function performAction(
  clients: Clients,
  order: OrderIdentity,
  place: ChildPlace,
  action: ChildAction,
): Promise<void> {
  const n = action.generation;
  const ns = place.namespace;
  if (action.kind === "passwordSecret") {
    const name = passwordSecretName(order, n);
    if (action.op === "delete") return deleteSecret(clients.core, ns, name);
    const existing = await readSecret(clients.core, ns, name);
    if (existing) {
      if (!isOwnChild(order, metaOf(existing))) throw new ChildError(messages.notAdopted("Secret", ns, name));
      return; // ours already: created once, never rewritten
    }
    await clients.core.createNamespacedSecret({
      namespace: ns,
      fieldManager: FIELD_MANAGER,
      body: {
        metadata: { name, namespace: ns, labels: passwordSecretLabels(order) },
        type: "Opaque",
        data: { username: encode(userName(order, n)), password: encode(newPassword()) },
      },
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
            rabbitmqClusterReference: { name: place.rabbitmqCluster },
          },
        ] as const)
      : ([
          permissionKind,
          permissionChildName(order, n),
          {
            vhost: vhostName(order),
            user: userName(order, n),
            permissions: { configure: ALL, write: ALL, read: ALL },
            rabbitmqClusterReference: { name: place.rabbitmqCluster },
          },
        ] as const);
  if (action.op === "delete") return deleteCustom(clients.custom, kind, ns, name);
  await applyOwned(clients, order, kind, ns, name, spec);
}

async function applyOwned(
  clients: Clients,
  order: OrderIdentity,
  kind: KindRef,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  const existing = (await readCustom(clients.custom, kind, namespace, name)) as KubeObject | undefined;
  if (existing && !isOwnChild(order, metaOf(existing))) {
    throw new ChildError(messages.notAdopted(kind.kind, namespace, name));
  }
  await applyCustom(clients.custom, kind, {
    metadata: { name, namespace, labels: childLabels(order) },
    spec,
  });
}
