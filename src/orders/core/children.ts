// What every leg does with its children in the ControlPlane's namespace: the container child applied
// (or left as it is when it already carries the spec), the per-generation children listed (only what
// the order owns counts) and written (server-side apply; a password Secret is created once and never
// rewritten), each recording the uid of the order that made it, and never an object of a child's name
// adopted that the order did not create, nor one an earlier order of the same name made.
import { secretKind, type KindRef } from "../../api/index.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import { isConflict, type Kube } from "../../runtime/port/kube.ts";
import { coreMessages } from "./conditions.ts";
import { decode, encode } from "./delivery.ts";
import { newPassword } from "./password.ts";
import { childStateOf, passwordStateOf, type ChildObject, type ChildReadiness } from "./generations.ts";
import type { GenerationChildren } from "./generations.ts";
import type { ContainerOutcome, GenerationListing } from "./kind.ts";
import {
  childAnnotations,
  childLabels,
  childSelector,
  isEarlierOrders,
  isOwnChild,
  parseGenerationChildName,
  uidAnnotation,
  type NamingScheme,
  type ObjectMeta,
  type OrderIdentity,
} from "./naming.ts";
import { ChildError } from "./errors.ts";

export function metaOf(object: KubeObject): ObjectMeta {
  return {
    name: object.metadata?.name ?? "",
    labels: object.metadata?.labels,
    annotations: object.metadata?.annotations,
    ownerReferences: object.metadata?.ownerReferences,
  };
}

/** A leg's annotations for a child, from the child as it exists (undefined: not yet). */
export type ExtraAnnotations = (existing: KubeObject | undefined) => Record<string, string>;

/**
 * What a child is written with: its kind, place and name, and the finalizers of the controller that
 * serves it. A leg whose children's controller is known sets its finalizer in the order's own apply,
 * which spares that controller a write of its own on every new child; an object being deleted gets no
 * finalizer it no longer has (the API server refuses one), and keeps one it has (the apply owns it).
 */
export interface ChildTarget {
  kind: KindRef;
  namespace: string;
  name: string;
  finalizers?: readonly string[] | undefined;
}

export function finalizersFor(
  target: ChildTarget,
  existing: KubeObject | undefined,
): { finalizers?: string[] } {
  if (!target.finalizers) return {};
  const have = existing?.metadata?.finalizers ?? [];
  const deleting = existing?.metadata?.deletionTimestamp !== undefined;
  return { finalizers: target.finalizers.filter((f) => !deleting || have.includes(f)) };
}

export const specOf = (object: KubeObject | undefined): Record<string, unknown> | undefined =>
  object?.["spec"] as Record<string, unknown> | undefined;

/**
 * Makes the container child carry `spec`. Throws ChildError for an object of that name the order does
 * not own, and the port's not-served error when the management cluster does not serve the kind.
 */
export async function applyContainerChild(
  kube: Kube,
  naming: NamingScheme,
  order: OrderIdentity,
  target: ChildTarget,
  spec: Record<string, unknown>,
  /** Annotations of the leg's own beside the core's, decided from the object as it is. */
  extra?: ExtraAnnotations,
): Promise<ContainerOutcome> {
  const { kind, namespace, name } = target;
  const existing = await kube.get(kind, { namespace, name });
  // The container carries no credential, and the resource it names belongs to the order's identity (a
  // Retain deletion keeps it for the next order of that identity): a leftover is taken over and stamped.
  const leftover = existing !== undefined && isEarlierOrders(naming, order, metaOf(existing));
  if (existing && !leftover && !isOwnChild(naming, order, metaOf(existing))) {
    throw new ChildError(coreMessages.notAdopted(kind.kind, namespace, name));
  }
  const labels = childLabels(naming, order);
  const annotations = { ...childAnnotations(naming, order), ...extra?.(existing) };
  if (
    existing &&
    sameSpec(specOf(existing), spec) &&
    hasLabels(existing, labels) &&
    stamped(existing, annotations)
  ) {
    return { kind: "applied", object: existing as ChildObject };
  }
  const body = {
    metadata: { name, namespace, labels, annotations, ...finalizersFor(target, existing) },
    spec,
  };
  return { kind: "applied", object: (await kube.apply(kind, body)) as ChildObject };
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

function stamped(object: KubeObject, annotations: Record<string, string>): boolean {
  return Object.entries(annotations).every(([k, v]) => object.metadata?.annotations?.[k] === v);
}

/** The kinds of a generation's account child (a User) and access child (a Permission, a Grant). */
export interface GenerationPieces {
  account: KindRef;
  access: KindRef;
  /** The discriminator of the access child's name: `permission`, `grant`. */
  accessDiscriminator: string;
  readiness: ChildReadiness;
  /** The spec field of the account and access children that names their backend (`{ name }`). */
  backendRef: string;
}

/** The order's account children, access children and password Secrets, indexed by generation. */
export interface Listing {
  accounts: Map<number, KubeObject>;
  access: Map<number, KubeObject>;
  passwords: Map<number, KubeObject>;
}

/** Every kind names its password Secrets `password-v<N>` and its account children `user-v<N>`. */
const PASSWORD = "password";
const ACCOUNT = "user";

export async function listGenerationChildren(
  kube: Kube,
  naming: NamingScheme,
  order: OrderIdentity,
  namespace: string,
  pieces: GenerationPieces,
): Promise<Listing> {
  const selector = childSelector(naming, order);
  const [accounts, access, secrets] = await Promise.all([
    kube.list(pieces.account, namespace, selector),
    kube.list(pieces.access, namespace, selector),
    kube.list(secretKind, namespace, selector),
  ]);
  const discriminators = [PASSWORD, ACCOUNT, pieces.accessDiscriminator];
  const leftovers: { kind: KindRef; item: KubeObject }[] = [];
  const unstamped: { kind: KindRef; item: KubeObject; into: Map<number, KubeObject>; generation: number }[] =
    [];
  const annotations = childAnnotations(naming, order);
  const index = (items: KubeObject[], discriminator: string, kind: KindRef): Map<number, KubeObject> => {
    const out = new Map<number, KubeObject>();
    for (const item of items) {
      const meta = metaOf(item);
      const id = parseGenerationChildName(naming, order, meta.name, discriminators);
      if (id?.discriminator !== discriminator) continue;
      if (isEarlierOrders(naming, order, meta)) leftovers.push({ kind, item });
      else if (isOwnChild(naming, order, meta)) {
        out.set(id.generation, item);
        if (!stamped(item, annotations)) unstamped.push({ kind, item, into: out, generation: id.generation });
      }
    }
    return out;
  };
  const listing = {
    accounts: index(accounts, ACCOUNT, pieces.account),
    access: index(access, pieces.accessDiscriminator, pieces.access),
    passwords: index(secrets, PASSWORD, secretKind),
  };
  // The credentials of an earlier order of this identity (deleted past its teardown, its children
  // restored from a snapshot, a target cluster registered again): never adopted, and removed here,
  // since no other pass looks at them while an order holds their names (the orphan sweep only runs for
  // an identity without an order). Deleting from the listing keeps them out of the generation state
  // machine altogether; until they are gone the names read as taken and the pass fails with a message
  // naming each and the uid that made it.
  for (const { kind, item } of leftovers) {
    if (item.metadata?.deletionTimestamp) continue;
    await kube.delete(kind, { namespace, name: item.metadata?.name ?? "" });
  }
  if (leftovers.length > 0) {
    const uid = uidAnnotation(naming);
    throw new ChildError(
      coreMessages.leftovers(
        leftovers.map(({ kind, item }) => ({
          kind: kind.kind,
          namespace,
          name: item.metadata?.name ?? "",
          uid: item.metadata?.annotations?.[uid] ?? "",
        })),
      ),
    );
  }
  // A child of the order that records no uid (made before children recorded it) is adopted as it is,
  // without a rotation, and stamped now, once: an order deleted past its teardown later leaves children
  // the next order of its name recognises as another's. A merge patch of the annotation alone, not an
  // apply: the listing does not know the child's spec, and a partial apply under the shared field manager
  // would drop the fields it names; a password Secret is never rewritten either way.
  for (const { kind, item, into, generation } of unstamped) {
    if (item.metadata?.deletionTimestamp) continue;
    // The child's other annotations are named too: the same merge on the API server, and on a port
    // that replaces the map.
    const merged = { ...item.metadata?.annotations, ...annotations };
    into.set(generation, await kube.patchMetadata(kind, item, { annotations: merged }));
  }
  return listing;
}

/** The listing as the core reads it. */
export function generationListing(listing: Listing, pieces: GenerationPieces): GenerationListing {
  return { generations: generationsOf(listing, pieces), passwordOf: (n) => passwordOf(listing, n) };
}

/** The backend a child's spec names in `field` (`{ name }`), if it names one. */
export function backendNamedBy(object: KubeObject | undefined, field: string): string | undefined {
  const ref = specOf(object)?.[field] as { name?: unknown } | undefined;
  return typeof ref?.name === "string" ? ref.name : undefined;
}

/** The listing as the generation functions read it. */
function generationsOf(listing: Listing, pieces: GenerationPieces): GenerationChildren[] {
  const { readiness, backendRef } = pieces;
  const generations = new Set([
    ...listing.accounts.keys(),
    ...listing.access.keys(),
    ...listing.passwords.keys(),
  ]);
  return [...generations].map((generation) => ({
    generation,
    password: passwordStateOf(
      listing.passwords.get(generation) as { data?: Record<string, string> } | undefined,
    ),
    account: childStateOf(listing.accounts.get(generation) as ChildObject | undefined, readiness),
    access: childStateOf(listing.access.get(generation) as ChildObject | undefined, readiness),
    backend:
      backendNamedBy(listing.accounts.get(generation), backendRef) ??
      backendNamedBy(listing.access.get(generation), backendRef),
  }));
}

/** Generation N's password from the listing ("" when absent). */
function passwordOf(listing: Listing, generation: number): string {
  const data = listing.passwords.get(generation)?.["data"] as Record<string, string> | undefined;
  return decode(data?.["password"]);
}

/**
 * Creates generation N's password Secret with a fresh password, once: a Secret of that name the order
 * owns is left as it is, one it does not own is refused (ChildError).
 */
export async function createPasswordSecret(
  kube: Kube,
  naming: NamingScheme,
  order: OrderIdentity,
  target: { namespace: string; name: string; labels: Record<string, string> },
  username: string,
): Promise<void> {
  const { namespace, name } = target;
  // Created first and read only when the name is taken: the common case costs one request, and a
  // Secret of that name is never written over either way.
  try {
    await kube.create(secretKind, {
      metadata: { name, namespace, labels: target.labels, annotations: childAnnotations(naming, order) },
      type: "Opaque",
      data: { username: encode(username), password: encode(newPassword()) },
    });
    return;
  } catch (error) {
    if (!isConflict(error)) throw error;
  }
  const existing = await kube.get(secretKind, { namespace, name }, { live: true });
  if (existing && !isOwnChild(naming, order, metaOf(existing)))
    throw new ChildError(coreMessages.notAdopted("Secret", namespace, name));
  // Ours already: created once, never rewritten. Gone again since the conflict: the next pass creates it.
}

/** Applies a child the order owns (or that does not exist yet); refuses a foreign one (ChildError). */
export async function applyOwned(
  kube: Kube,
  naming: NamingScheme,
  order: OrderIdentity,
  target: ChildTarget,
  spec: Record<string, unknown>,
  extra?: ExtraAnnotations,
): Promise<void> {
  const { kind, namespace, name } = target;
  const existing = await kube.get(kind, { namespace, name });
  if (existing && !isOwnChild(naming, order, metaOf(existing))) {
    throw new ChildError(coreMessages.notAdopted(kind.kind, namespace, name));
  }
  await kube.apply(kind, {
    metadata: {
      name,
      namespace,
      labels: childLabels(naming, order),
      annotations: { ...childAnnotations(naming, order), ...extra?.(existing) },
      ...finalizersFor(target, existing),
    },
    spec,
  });
}
