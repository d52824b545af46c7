// The administrator's password of the server of the settings (--mariadb-host): fixed, from the
// environment (VHOST_BROKER_MARIADB_PASSWORD), or a file (--mariadb-password-file, e.g. a mounted Secret
// the kubelet updates in place). The registry reads the file as it reads a credentials Secret: again after
// `credentialsTtlMs` and at once after a refused login. Changed content is a new credential version, and
// so a new pool. filePassword decides, purely, from what readPasswordFile read with the reader it is
// given. A reason names the path, never the content.

export type SettingsPassword = { value: string } | { file: string };

/** What reading the file gave: its content, or the error's code (ENOENT, EACCES, ...). */
export type FileRead = { outcome: "read"; content: string } | { outcome: "failed"; code: string };

/** A password as the file gave it, and its credential version (a counter: the pool key never holds it). */
export interface VersionedPassword {
  password: string;
  generation: number;
}

export type PasswordRead =
  { outcome: "ready"; password: VersionedPassword } | { outcome: "waiting"; reason: string };

/** Reads `path` with `readFile`; a failure keeps the error's code only (its message is never passed on). */
export async function readPasswordFile(
  readFile: (path: string) => Promise<string>,
  path: string,
): Promise<FileRead> {
  try {
    return { outcome: "read", content: await readFile(path) };
  } catch (error) {
    const code = (error as { code?: unknown } | undefined)?.code;
    return { outcome: "failed", code: typeof code === "string" ? code : "unreadable" };
  }
}

/**
 * The password in the file at `path`, against the one `held` before: the same generation while the
 * content is unchanged, the next when it changed. The trailing line break a file often ends with is not
 * part of the password.
 */
export function filePassword(
  path: string,
  read: FileRead,
  held: VersionedPassword | undefined,
): PasswordRead {
  const what = `the administrator's password file ${path} (mariadb-password-file)`;
  if (read.outcome === "failed") {
    const why = read.code === "ENOENT" ? "does not exist" : `cannot be read (${read.code})`;
    return { outcome: "waiting", reason: `${what} ${why}` };
  }
  const password = read.content.replace(/[\r\n]+$/, "");
  if (!password) return { outcome: "waiting", reason: `${what} is empty` };
  if (held?.password === password) return { outcome: "ready", password: held };
  return { outcome: "ready", password: { password, generation: (held?.generation ?? 0) + 1 } };
}
