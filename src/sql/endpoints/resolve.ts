// Which MariaDB server an SQL object's mariaDbRef names, decided from the ControlPlanes of the ref's
// namespace: a ControlPlane whose spec.infrastructure.database.clusterRef names the MariaDB gives its
// credentials Secret (the one the MariaDBDatabase orders read). A ref no ControlPlane declares goes to
// the server of the settings (--mariadb-host), as before ControlPlanes declared servers; without that
// setting it is unresolved. A pure decision: nothing here reads or writes.
import { ControlPlaneSchema } from "../../api/index.ts";
import { byCodeUnits } from "../../runtime/base/code-units.ts";

export interface NamespacedName {
  namespace: string;
  name: string;
}

/** The part of a ControlPlane the resolution reads. */
export interface DeclaringView extends NamespacedName {
  /** The MariaDB's name and its credentials Secret's, both in the ControlPlane's namespace. */
  database?: { mariadb: string; secret: string } | undefined;
}

/** A cached ControlPlane as the resolution reads it; undefined when it does not parse. */
export function declaringView(raw: unknown): DeclaringView | undefined {
  const parsed = ControlPlaneSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const { metadata, spec } = parsed.data;
  const database = spec?.infrastructure?.database;
  return {
    namespace: metadata.namespace ?? "",
    name: metadata.name ?? "",
    database: database && { mariadb: database.clusterRef.name, secret: database.secretRef.name },
  };
}

/** The MariaDB a ref names: its namespace defaults to the object's own. */
export function refKey(
  ref: { name?: string | undefined; namespace?: string | undefined } | undefined,
  objectNamespace: string,
): NamespacedName {
  return { namespace: ref?.namespace || objectNamespace, name: ref?.name ?? "" };
}

export type Resolution =
  /** A ControlPlane declares the MariaDB: its credentials Secret, and which ControlPlanes say so. */
  | { outcome: "declared"; secret: NamespacedName; by: string[] }
  /** No ControlPlane declares it: the server of the settings. */
  | { outcome: "settings" }
  | { outcome: "unresolved"; reason: string };

/**
 * `controlPlanes`: those of the ref's namespace. `settingsServer`: whether --mariadb-host is set.
 * `wasDeclared`: the ref resolved to a ControlPlane's server before in this process; it never falls back
 * to the settings' server then, since its objects live on the other server.
 */
export function resolveServer(
  ref: NamespacedName,
  controlPlanes: readonly DeclaringView[],
  options: { settingsServer: boolean; wasDeclared: boolean },
): Resolution {
  const where = `MariaDB ${ref.namespace}/${ref.name}`;
  if (!ref.name) return { outcome: "unresolved", reason: "spec.mariaDbRef names no MariaDB" };
  const declaring = controlPlanes
    .filter((cp) => cp.namespace === ref.namespace && cp.database?.mariadb === ref.name)
    .sort((a, b) => byCodeUnits(a.name, b.name));
  const secrets = [...new Set(declaring.map((cp) => cp.database?.secret ?? ""))];
  const by = declaring.map((cp) => cp.name);
  if (secrets.length > 1) {
    return {
      outcome: "unresolved",
      reason: `${where} is declared by ControlPlanes ${by.join(", ")} with different credentials Secrets (${secrets.join(", ")}); waiting until they agree`,
    };
  }
  const [secret] = secrets;
  if (secret !== undefined)
    return { outcome: "declared", secret: { namespace: ref.namespace, name: secret }, by };
  if (options.wasDeclared) {
    return {
      outcome: "unresolved",
      reason: `${where} is no longer declared by a ControlPlane of namespace ${ref.namespace}; waiting for one to declare it (its objects are never moved to another server)`,
    };
  }
  if (options.settingsServer) return { outcome: "settings" };
  return {
    outcome: "unresolved",
    reason: `no ControlPlane of namespace ${ref.namespace} declares ${where} (spec.infrastructure.database), and no mariadb-host is set`,
  };
}
