// The server of each SQL object, resolved per pass: the ControlPlanes of its mariaDbRef's namespace (from
// the cache a watch keeps) decide which credentials Secret applies (resolve.ts), the Secret is read and
// parsed as the MariaDBDatabase orders read it (src/mariadb/credentials.ts), and the pool for that
// address, account and credential version is handed out (pools.ts). The Secret is read again after
// `credentialsTtlMs`, and at once after the server refused the administrator's login, so a rotated
// password reaches the controller without a restart and the old pool is closed. The server of the
// settings is read the same way when its password comes from a file (settings-password.ts). Nothing
// secret is put in a reason: the Secret's name or the file's path, never their values.
import { readFile } from "node:fs/promises";
import { controlPlaneKind, secretKind } from "../../api/index.ts";
import type { Endpoint } from "../../external/index.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import { namespacesOutOfReach, outOfReachText } from "../../runtime/base/secret-reach.ts";
import { parseServerCredentials } from "../../mariadb/credentials.ts";
import type { SqlServer } from "../statements/index.ts";
import { ServerPools, type ServerTarget } from "./pools.ts";
import { declaringView, resolveServer, type NamespacedName } from "./resolve.ts";
import {
  filePassword,
  readPasswordFile,
  type SettingsPassword,
  type VersionedPassword,
} from "./settings-password.ts";

/** The server of the settings, its password fixed or in a file. */
export type SettingsServer = Omit<ServerTarget, "source" | "version" | "password"> & {
  password: SettingsPassword;
};

export interface ServerRegistrySettings {
  /** The server of the settings (--mariadb-host), for refs no ControlPlane declares; absent: none. */
  settingsServer?: SettingsServer | undefined;
  /** How long a credentials Secret read (or the settings' password file) is used before it is read again. */
  credentialsTtlMs: number;
  /** A pool no pass asked for this long is closed. */
  idleMs: number;
  /** --secret-namespaces: a credentials Secret elsewhere is never asked for. */
  secretNamespaces?: readonly string[] | undefined;
}

type Read = { outcome: "ready"; target: ServerTarget } | { outcome: "waiting"; reason: string };

interface CachedRead {
  readAt: number;
  read: Promise<Read>;
}

/** The source of the settings' server: no Secret's key (those are namespace/name). */
const SETTINGS = "settings";

/** errno of a refused login: as the administrator, the credentials the pool holds are stale. */
const ACCESS_DENIED = 1045;

export class ServerRegistry {
  readonly #settings: ServerRegistrySettings;
  readonly #pools: ServerPools;
  readonly #now: () => number;
  readonly #readPassword: (path: string) => Promise<string>;
  readonly #reads = new Map<string, CachedRead>();
  /** Refs that resolved to a ControlPlane's server in this process. */
  readonly #declared = new Set<string>();
  /** The password the settings' file gave last, for its credential version. */
  #filePassword: VersionedPassword | undefined;

  constructor(
    settings: ServerRegistrySettings,
    open: (target: ServerTarget) => SqlServer,
    now: () => number,
    readPassword: (path: string) => Promise<string> = (path) => readFile(path, "utf8"),
  ) {
    this.#settings = settings;
    this.#now = now;
    this.#readPassword = readPassword;
    this.#pools = new ServerPools((target) => this.#watched(target, open(target)), settings.idleMs);
  }

  /** The server of `ref` (the MariaDB the object names), or why there is none yet. */
  async endpoint(kube: Kube, ref: NamespacedName): Promise<Endpoint<SqlServer>> {
    const controlPlanes = (await kube.list(controlPlaneKind, ref.namespace, ""))
      .map(declaringView)
      .filter((v) => v !== undefined);
    const refText = `${ref.namespace}/${ref.name}`;
    const resolution = resolveServer(ref, controlPlanes, {
      settingsServer: this.#settings.settingsServer !== undefined,
      wasDeclared: this.#declared.has(refText),
    });
    if (resolution.outcome === "unresolved") return { outcome: "waiting", reason: resolution.reason };
    let read: Read;
    if (resolution.outcome === "settings") {
      read = await this.#read(SETTINGS, () => this.#readSettings(this.#settings.settingsServer!));
    } else {
      this.#declared.add(refText);
      const outside = namespacesOutOfReach(this.#settings.secretNamespaces, [resolution.secret.namespace]);
      if (outside.length > 0) {
        return {
          outcome: "waiting",
          reason: `${outOfReachText(outside)}: the credentials Secret of MariaDB ${refText}`,
        };
      }
      const { namespace, name } = resolution.secret;
      read = await this.#read(`${namespace}/${name}`, () => readCredentials(kube, resolution.secret));
    }
    if (read.outcome === "waiting")
      return { outcome: "waiting", reason: `MariaDB ${refText}: ${read.reason}` };
    const { target } = read;
    return {
      outcome: "ready",
      client: this.#pools.get(target, this.#now()),
      // The memo's endpoint: the server and account, not the credentials' version (a rotation of the
      // administrator's password is no reason to send every object's statements again).
      key: `${target.host}:${target.port}/${target.username}`,
    };
  }

  /** The credentials of `key`, read once per `credentialsTtlMs` (passes meanwhile share the read). */
  #read(key: string, load: () => Promise<Read>): Promise<Read> {
    const now = this.#now();
    const cached = this.#reads.get(key);
    if (cached && now - cached.readAt < this.#settings.credentialsTtlMs) return cached.read;
    const read = load();
    this.#reads.set(key, { readAt: now, read });
    // A failed read is not kept: the next pass reads again.
    read.catch(() => this.#reads.get(key)?.read === read && this.#reads.delete(key));
    return read;
  }

  /** The settings' server: its fixed password, or its file's, a new version when the content changed. */
  async #readSettings({ password, ...server }: SettingsServer): Promise<Read> {
    const ready = (secret: string, version: string): Read => ({
      outcome: "ready",
      target: { ...server, password: secret, source: SETTINGS, version },
    });
    if ("value" in password) return ready(password.value, SETTINGS);
    const read = filePassword(
      password.file,
      await readPasswordFile(this.#readPassword, password.file),
      this.#filePassword,
    );
    if (read.outcome === "waiting") return read;
    // Held and versioned in the same turn as the comparison: a concurrent read counts on from it.
    this.#filePassword = read.password;
    return ready(read.password.password, `file/${read.password.generation}`);
  }

  /** The pool of `target`, which forgets the credentials read when the server refuses the administrator. */
  #watched(target: ServerTarget, server: SqlServer): SqlServer {
    const refused = (error: unknown): never => {
      if ((error as { errno?: unknown }).errno === ACCESS_DENIED) this.#reads.delete(target.source);
      throw error;
    };
    return {
      run: (sql) => server.run(sql).catch(refused),
      select: <T>(sql: string, params: (string | number)[]) => server.select<T>(sql, params).catch(refused),
      login: (username, password, database) => server.login(username, password, database),
      close: () => server.close(),
    };
  }
}

async function readCredentials(kube: Kube, secret: NamespacedName): Promise<Read> {
  const key = `${secret.namespace}/${secret.name}`;
  const object = await kube.get(secretKind, secret);
  if (!object) return { outcome: "waiting", reason: `its credentials Secret ${key} is not found` };
  const read = parseServerCredentials(object["data"] as Record<string, string> | undefined);
  if (read.outcome === "incomplete") {
    return {
      outcome: "waiting",
      reason: `its credentials Secret ${key} lacks ${read.missing.map((k) => `"${k}"`).join(", ")}`,
    };
  }
  if (read.outcome === "badPort") {
    return {
      outcome: "waiting",
      reason: `its credentials Secret ${key} names no usable port: ${read.message}`,
    };
  }
  if (read.outcome === "badHost") {
    return {
      outcome: "waiting",
      reason: `its credentials Secret ${key} names no usable host: ${read.message}`,
    };
  }
  const { uid = "", resourceVersion = "" } = object.metadata ?? {};
  return {
    outcome: "ready",
    target: { ...read.credentials, source: key, version: `${uid}/${resourceVersion}` },
  };
}
