// User: PUT /api/users/{name} with a salted SHA-512 password hash (the plain password never leaves
// this process), tags, and limits (max-connections, max-channels).
import type { z } from "zod";
import type { DeleteOutcome, ManagementClient } from "../../rabbitmq/client.ts";
import { sameTags } from "./compare.ts";
import { absentOnNotFound } from "../../rabbitmq/errors.ts";
import { applyLimits, currentLimits, limitDifferences, type DesiredLimits } from "./limits.ts";
import { SHA512_ALGORITHM, hashPasswordSha512, verifyPassword } from "../../rabbitmq/password.ts";
import { apiPath } from "../../rabbitmq/paths.ts";
import { userSchema } from "./schemas.ts";
import { readBack, type ReadBack, type UserCredentials, type UserSpec } from "./specs.ts";

/** The PUT body; a plain password is hashed with a fresh salt on every call. */
export function userBody(spec: UserSpec): Record<string, string> {
  return {
    password_hash: passwordHash(spec.credentials),
    hashing_algorithm: SHA512_ALGORITHM,
    tags: (spec.tags ?? []).join(","),
  };
}

function passwordHash(credentials: UserCredentials): string {
  return "password" in credentials ? hashPasswordSha512(credentials.password) : credentials.passwordHash;
}

function userLimits(spec: UserSpec): DesiredLimits {
  return { "max-connections": spec.limits?.connections, "max-channels": spec.limits?.channels };
}

export async function declareUser(client: ManagementClient, spec: UserSpec): Promise<void> {
  await client.put(apiPath("users", spec.username), userBody(spec));
  await applyLimits(client, "user-limits", spec.username, userLimits(spec));
}

export async function deleteUser(client: ManagementClient, username: string): Promise<DeleteOutcome> {
  return client.delete(apiPath("users", username));
}

/**
 * Deletes the broker's default `guest` user (a definitions import on node boot brings it back).
 * "skipped" when this client itself logs in as that user: deleting it would lock the client out.
 */
export async function deleteGuestUser(
  client: ManagementClient,
  username = "guest",
): Promise<DeleteOutcome | "skipped"> {
  if (client.username === username) return "skipped";
  return deleteUser(client, username);
}

/** Exists and matches: tags, limits, and the stored hash verifies the desired password. */
export async function readBackUser(client: ManagementClient, spec: UserSpec): Promise<ReadBack> {
  const actual = await client.find(apiPath("users", spec.username), userSchema);
  if (!actual) return readBack(false, []);
  const limits = await currentLimits(client, "user-limits", spec.username).catch(absentOnNotFound);
  return compareUser(spec, actual, limits);
}

/** The user as the broker holds it (with its limits) against the desired state; undefined = missing. */
export function compareUser(
  spec: UserSpec,
  actual: z.infer<typeof userSchema> | undefined,
  limits: Record<string, number> | undefined,
): ReadBack {
  if (!actual || !limits) return readBack(false, []);
  const differences: string[] = [];
  if (!sameTags(actual.tags, spec.tags ?? [])) differences.push("tags");
  const passwordHeld =
    "password" in spec.credentials
      ? verifyPassword(spec.credentials.password, actual.password_hash, actual.hashing_algorithm)
      : actual.password_hash === spec.credentials.passwordHash;
  if (!passwordHeld) differences.push("password");
  differences.push(...limitDifferences(userLimits(spec), limits));
  return readBack(true, differences);
}
