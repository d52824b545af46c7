// Whether the server validates the passwords it is given, read from the server itself rather than from
// a setting a person must remember. With a password validation plugin active and
// strict_password_validation ON (its default), MariaDB refuses a password given as a hash, which it
// cannot check; there the account is created and altered with the password itself, so the plugin can.
import type { SqlSession } from "./client.ts";

export interface PasswordValidation {
  /** The active password validation plugins (simple_password_check, cracklib_password_check, ...). */
  plugins: string[];
  strict: boolean;
  /** The session's sql_mode has NO_BACKSLASH_ESCAPES: a password literal is quoted for it. */
  noBackslashEscapes: boolean;
}

/** The server's validation plugins refused the password: a new one is needed, not the same again. */
export class PasswordRefused extends Error {
  override name = "PasswordRefused";
}

interface SettingsRow {
  strict: number | string | null;
  mode: string | null;
}

export async function readPasswordValidation(session: SqlSession): Promise<PasswordValidation> {
  const [settings] = await session.select<SettingsRow>(
    "SELECT @@strict_password_validation AS strict, @@sql_mode AS mode",
    [],
  );
  const plugins = await session.select<{ name: string }>(
    "SELECT PLUGIN_NAME AS name FROM information_schema.PLUGINS WHERE PLUGIN_TYPE = ? AND PLUGIN_STATUS = ? ORDER BY PLUGIN_NAME",
    ["PASSWORD VALIDATION", "ACTIVE"],
  );
  return {
    plugins: plugins.map((p) => p.name),
    strict: Number(settings?.strict ?? 0) === 1,
    noBackslashEscapes: (settings?.mode ?? "").split(",").includes("NO_BACKSLASH_ESCAPES"),
  };
}

/** Whether a password must be sent as itself: a hash would be refused (ER_OPTION_PREVENTS_STATEMENT). */
export function needsPlainPassword(validation: PasswordValidation): boolean {
  return validation.strict && validation.plugins.length > 0;
}

/** The server's policy in words, for a condition: which plugins, and whether hashes are refused. */
export function describePolicy(validation: PasswordValidation): string {
  const plugins = validation.plugins.length > 0 ? validation.plugins.join(", ") : "no validation plugin";
  return `${plugins}; strict_password_validation ${validation.strict ? "ON" : "OFF"}`;
}
