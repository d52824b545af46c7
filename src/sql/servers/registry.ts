// The server of each SQL object, resolved per pass: the ControlPlanes of its mariaDbRef's namespace (from
// the cache a watch keeps) decide which credentials Secret applies (resolve.ts), the Secret is read and
// parsed as the MariaDBDatabase orders read it (src/mariadb/credentials.ts), and the pool for that
// address, account and credential version is handed out (pools.ts). The Secret is read again after
// `credentialsTtlMs`, and at once after the server refused the administrator's login, so a rotated
// password reaches the controller without a restart and the old pool is closed. Nothing secret is put in
// a reason: the Secret's name, never its values.
import { controlPlaneKind, secretKind } from "../../api/index.ts";
import type { Endpoint } from "../../external/index.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import { namespacesOutOfReach, outOfReachText } from "../../runtime/base/secret-reach.ts";
import { parseServerCredentials } from "../../mariadb/credentials.ts";
import type { SqlServer } from "../server/index.ts";
import { ServerPools, type ServerTarget } from "./pools.ts";
import { declaringView, resolveServer, type NamespacedName } from "./resolve.ts";

export interface ServerRegistrySettings {
  /** The server of the settings (--mariadb-host), for refs no ControlPlane declares; absent: none. */
  settingsServer?: Omit<ServerTarget, "source" | "version"> | undefined;
  /** How long a credentials Secret read is used before it is read again. */
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

/** errno of a refused login: as the administrator, the credentials the pool holds are stale. */
const ACCESS_DENIED = 1045;

export class ServerRegistry {
  readonly #settings: ServerRegistrySettings;
  readonly #pools: ServerPools;
  readonly #now: () => number;
  readonly #reads = new Map<string, CachedRead>();
  /** Refs that resolved to a ControlPlane's server in this process. */
  readonly #declared = new Set<string>();

  constructor(
    settings: ServerRegistrySettings,
    open: (target: ServerTarget) => SqlServer,
    now: () => number,
  ) {
    this.#settings = settings;
    this.#now = now;
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
    let target: ServerTarget;
    if (resolution.outcome === "settings") {
      target = { ...this.#settings.settingsServer!, source: "settings", version: "settings" };
    } else {
      this.#declared.add(refText);
      const outside = namespacesOutOfReach(this.#settings.secretNamespaces, [resolution.secret.namespace]);
      if (outside.length > 0) {
        return {
          outcome: "waiting",
          reason: `${outOfReachText(outside)}: the credentials Secret of MariaDB ${refText}`,
        };
      }
      const read = await this.#read(kube, resolution.secret);
      if (read.outcome === "waiting")
        return { outcome: "waiting", reason: `MariaDB ${refText}: ${read.reason}` };
      target = read.target;
    }
    return {
      outcome: "ready",
      client: this.#pools.get(target, this.#now()),
      // The memo's endpoint: the server and account, not the credentials' version (a rotation of the
      // administrator's password is no reason to send every object's statements again).
      key: `${target.host}:${target.port}/${target.username}`,
    };
  }

  /** The credentials Secret, read once per `credentialsTtlMs` (passes meanwhile share the read). */
  #read(kube: Kube, secret: NamespacedName): Promise<Read> {
    const key = `${secret.namespace}/${secret.name}`;
    const now = this.#now();
    const cached = this.#reads.get(key);
    if (cached && now - cached.readAt < this.#settings.credentialsTtlMs) return cached.read;
    const read = readCredentials(kube, secret);
    this.#reads.set(key, { readAt: now, read });
    // A failed read is not kept: the next pass reads again.
    read.catch(() => this.#reads.get(key)?.read === read && this.#reads.delete(key));
    return read;
  }

  /** The pool of `target`, which forgets the Secret read when the server refuses the administrator. */
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
  const { uid = "", resourceVersion = "" } = object.metadata ?? {};
  return {
    outcome: "ready",
    target: { ...read.credentials, source: key, version: `${uid}/${resourceVersion}` },
  };
}
