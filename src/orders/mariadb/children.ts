// The MariaDBDatabase order's children in the ControlPlane's namespace, through seed 002's kinds: the
// Database and, per generation, a password Secret, a User importing it and a Grant of all privileges on
// the database, read and written through the core's child functions. Under either policy the users go
// with the order (cleanupPolicy Delete); the Database's cleanupPolicy follows the order's deletionPolicy.
import {
  secretKind,
  SQL_ADOPT_ANNOTATION,
  SQL_CLAIM_ANNOTATION,
  SqlReason,
  sqlDatabaseKind,
  sqlGrantKind,
  sqlUserKind,
} from "../../api/index.ts";
import { SQL_WATCH_LABEL } from "../../api/contracts.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import {
  applyContainerChild,
  applyOwned,
  createPasswordSecret,
  generationListing,
  listGenerationChildren,
  metaOf,
  specOf,
  type ExtraAnnotations,
  type GenerationPieces,
} from "../core/children.ts";
import type { ChildAction, ChildReadiness } from "../core/generations.ts";
import type { ChildPlace, ContainerOutcome, GenerationListing } from "../core/kind.ts";
import { childLabels, isOwnChild, type OrderIdentity } from "../core/naming.ts";
import { ChildError } from "../core/errors.ts";
import { messages } from "./conditions.ts";
import {
  grantChildName,
  MARIADB_NAMING,
  passwordSecretName,
  sqlClaim,
  userChildName,
  userName,
} from "./naming.ts";

/**
 * Seed 002's kinds report on one Ready condition whose observedGeneration is the generation it speaks of;
 * ReconcileError is their refusal, and NotOwned (a schema or account on the server that is not the
 * order's) too; PasswordRefused (the server's validation policy refused the password) is answered by a
 * new generation with a new password.
 */
export const sqlReadiness: ChildReadiness = {
  refusedReason: SqlReason.ReconcileError,
  otherRefusals: [SqlReason.NotOwned],
  newPasswordReasons: [SqlReason.PasswordRefused],
  observedGeneration: (object, ready) => ready.observedGeneration ?? object.metadata?.generation,
};

const pieces: GenerationPieces = {
  account: sqlUserKind,
  access: sqlGrantKind,
  accessDiscriminator: "grant",
  readiness: sqlReadiness,
  backendRef: "mariaDbRef",
};

/**
 * The order's claim on what the child declares on the server (src/api/sql-claim.ts). A child made
 * before claims existed (it carries none) already served its schema or account under the same name:
 * it may adopt it once, unmarked, and keeps that leave while it names the same thing. Every child
 * made since claims existed gets none, so a schema or account it did not create is refused.
 */
export function claimAnnotations(order: OrderIdentity, serverName: string): ExtraAnnotations {
  return (existing: KubeObject | undefined) => {
    const held = existing?.metadata?.annotations ?? {};
    const sameName = (specOf(existing)?.["name"] as string | undefined) === serverName;
    const legacy = existing !== undefined && held[SQL_CLAIM_ANNOTATION] === undefined;
    const adopt = sameName && (legacy || held[SQL_ADOPT_ANNOTATION] === "true");
    return { [SQL_CLAIM_ANNOTATION]: sqlClaim(order), ...(adopt ? { [SQL_ADOPT_ANNOTATION]: "true" } : {}) };
  };
}

export const cleanupPolicy = (deletionPolicy: "retain" | "delete"): "Skip" | "Delete" =>
  deletionPolicy === "delete" ? "Delete" : "Skip";

export function databaseSpec(database: string, mariadb: string, deletionPolicy: "retain" | "delete") {
  return { name: database, mariaDbRef: { name: mariadb }, cleanupPolicy: cleanupPolicy(deletionPolicy) };
}

/** The fields of the Database spec the order applies, without the policy. */
export function pickDatabaseSpec(object: unknown): Record<string, unknown> {
  const spec = specOf(object as Parameters<typeof specOf>[0]) ?? {};
  return { name: spec["name"], mariaDbRef: spec["mariaDbRef"] };
}

/**
 * Makes the Database CR carry the order's database and policy. A database another Database in the
 * namespace already declares, which the order did not create, is refused: deleting either order under
 * Delete would drop the other's data.
 */
export async function applyDatabase(
  kube: Kube,
  order: OrderIdentity,
  place: ChildPlace,
  deletionPolicy: "retain" | "delete",
): Promise<ContainerOutcome> {
  const database = place.resource;
  const name = place.container;
  const existing = await kube.get(sqlDatabaseKind, { namespace: place.namespace, name });
  if (!existing) {
    const taken = (await kube.list(sqlDatabaseKind, place.namespace, "")).find((other) => {
      const spec = specOf(other) ?? {};
      const declared = (spec["name"] as string | undefined) ?? other.metadata?.name;
      return declared === database && !isOwnChild(MARIADB_NAMING, order, metaOf(other));
    });
    if (taken)
      throw new ChildError(messages.databaseTaken(database, place.namespace, taken.metadata?.name ?? ""));
  }
  const target = { kind: sqlDatabaseKind, namespace: place.namespace, name };
  return applyContainerChild(
    kube,
    MARIADB_NAMING,
    order,
    target,
    databaseSpec(database, place.backend, deletionPolicy),
    claimAnnotations(order, database),
  );
}

/** The account of generation N as the order names it (userName, in the order's scheme). */
export type AccountName = (order: OrderIdentity, generation: number) => string;

/**
 * The order's generations. `accounts` hears the accounts its Users name, before anything else is done
 * with them (which account scheme the order keeps: legacyAccounts in naming.ts).
 */
export async function listGenerations(
  kube: Kube,
  order: OrderIdentity,
  namespace: string,
  accounts: (names: string[]) => void = () => undefined,
): Promise<GenerationListing> {
  const listing = await listGenerationChildren(kube, MARIADB_NAMING, order, namespace, pieces);
  accounts([...listing.accounts.values()].map((user) => String(specOf(user)?.["name"] ?? "")));
  // Users and Grants made before claims existed are claimed in place, once (a merge patch, as the core
  // stamps a uid): the plan does not rewrite a generation that is ready, and an unclaimed Grant would
  // be refused on the database its claimed Database marked. Such a User served its account for this
  // order already, whatever its name's scheme: it may take it over.
  for (const [kind, items] of [
    [sqlUserKind, listing.accounts],
    [sqlGrantKind, listing.access],
  ] as const) {
    for (const [generation, item] of items) {
      if (item.metadata?.deletionTimestamp || item.metadata?.annotations?.[SQL_CLAIM_ANNOTATION]) continue;
      const claim = {
        [SQL_CLAIM_ANNOTATION]: sqlClaim(order),
        ...(kind === sqlUserKind ? { [SQL_ADOPT_ANNOTATION]: "true" } : {}),
      };
      const annotations = { ...item.metadata?.annotations, ...claim };
      items.set(generation, await kube.patchMetadata(kind, item, { annotations }));
    }
  }
  return generationListing(listing, pieces);
}

/**
 * Performs one action of the generation plan. Throws ChildError for a foreign object of that name.
 * `requireX509`: the User declares REQUIRE X509 (seed 002: when the deployment uses TLS). A User is
 * declared once, so a change of it reaches the accounts of later generations only.
 */
export async function performAction(
  kube: Kube,
  order: OrderIdentity,
  place: ChildPlace,
  action: ChildAction,
  account: AccountName = userName,
  requireX509 = false,
): Promise<void> {
  const database = place.resource;
  const n = action.generation;
  const ns = place.namespace;
  const mariaDbRef = { name: place.backend };
  if (action.kind === "passwordSecret") {
    const name = passwordSecretName(order, n);
    if (action.op === "delete")
      return kube.delete(secretKind, { namespace: ns, name }, { quiet: action.quiet });
    const labels = { ...childLabels(MARIADB_NAMING, order), [SQL_WATCH_LABEL]: "" };
    return createPasswordSecret(
      kube,
      MARIADB_NAMING,
      order,
      { namespace: ns, name, labels },
      account(order, n),
    );
  }
  const [kind, name, spec] =
    action.kind === "account"
      ? ([
          sqlUserKind,
          userChildName(order, n),
          {
            name: account(order, n),
            host: "%",
            passwordSecretKeyRef: { name: passwordSecretName(order, n), key: "password" },
            ...(requireX509 ? { require: { x509: true } } : {}),
            mariaDbRef,
            cleanupPolicy: "Delete",
          },
        ] as const)
      : ([
          sqlGrantKind,
          grantChildName(order, n),
          {
            privileges: ["ALL PRIVILEGES"],
            database,
            table: "*",
            username: account(order, n),
            host: "%",
            mariaDbRef,
            cleanupPolicy: "Delete",
          },
        ] as const);
  if (action.op === "delete") return kube.delete(kind, { namespace: ns, name }, { quiet: action.quiet });
  // A Grant adopts nothing: it grants once its database and account carry the order's claim.
  const claim = claimAnnotations(order, action.kind === "account" ? account(order, n) : "");
  await applyOwned(kube, MARIADB_NAMING, order, { kind, namespace: ns, name }, spec, claim);
}
