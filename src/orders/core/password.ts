// The passwords the order generates. Hardened servers load password validation plugins (MariaDB's
// simple_password_check asks by default for 8 characters with a digit, an upper-case and a lower-case
// letter and one other character), so every password holds each class by construction. The alphabet
// is base64url's: letters, digits, `-` and `_` are unreserved in a URL, so the delivered transport_url
// and connection carry them as they are and no consumer's parser reads them as a delimiter.
import { randomInt } from "node:crypto";

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const OTHER = "-_";
const ALPHABET = UPPER + LOWER + DIGITS + OTHER;

/** 43 characters (about 256 bits, as 32 random bytes in base64url), one of each class at a random place. */
export const PASSWORD_LENGTH = 43;

const pick = (from: string): string => from.charAt(randomInt(from.length));

export function newPassword(): string {
  const chars = [pick(UPPER), pick(LOWER), pick(DIGITS), pick(OTHER)];
  while (chars.length < PASSWORD_LENGTH) chars.push(pick(ALPHABET));
  // Fisher-Yates with the same generator, so the four classes sit anywhere.
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j] as string, chars[i] as string];
  }
  return chars.join("");
}
