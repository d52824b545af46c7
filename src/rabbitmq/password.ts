// RabbitMQ's salted password hashes: base64(salt ‖ H(salt ‖ utf8(password))) with a 4-byte salt.
// Users are declared with SHA-512 hashes, so the plain password never crosses the wire; the
// verifier also reads SHA-256, which the broker uses for a user created with a plain password.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

export const SHA512_ALGORITHM = "rabbit_password_hashing_sha512";
export const SHA256_ALGORITHM = "rabbit_password_hashing_sha256";

const SALT_BYTES = 4;
const digests: Record<string, string> = { [SHA512_ALGORITHM]: "sha512", [SHA256_ALGORITHM]: "sha256" };

function saltedDigest(digest: string, salt: Buffer, password: string): Buffer {
  return createHash(digest).update(salt).update(password, "utf8").digest();
}

/** A new salted SHA-512 hash of `password`, for `password_hash` with `hashing_algorithm` SHA512_ALGORITHM. */
export function hashPasswordSha512(password: string, salt: Buffer = randomBytes(SALT_BYTES)): string {
  if (salt.length !== SALT_BYTES) throw new Error(`a password salt has ${SALT_BYTES} bytes`);
  return Buffer.concat([salt, saltedDigest("sha512", salt, password)]).toString("base64");
}

/**
 * Whether `password` matches a hash the broker stores. False for an algorithm other than SHA-256 or
 * SHA-512, and for an empty hash (a user without a password).
 */
export function verifyPassword(password: string, passwordHash: string, hashingAlgorithm: string): boolean {
  const digest = digests[hashingAlgorithm];
  if (!digest) return false;
  const stored = Buffer.from(passwordHash, "base64");
  if (stored.length <= SALT_BYTES) return false;
  const salt = stored.subarray(0, SALT_BYTES);
  const expected = stored.subarray(SALT_BYTES);
  const actual = saltedDigest(digest, salt, password);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
