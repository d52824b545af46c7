// Connection: once username can log in with the password of passwordSecretKeyRef (to database, when
// set), its Secret (spec.secretName, default metadata.name) is written beside it from secretTemplate,
// with an owner reference, so that it goes with the Connection. The host is spec.host, else the
// Service serviceName or the one mariaDbRef names, in the MariaDB's namespace; the port is spec.port,
// else the server's. A Secret of that name that another owner holds is left alone (NotOwned).
import { SqlConnectionSchema, secretKind, sqlConnectionKind, type SqlConnection } from "../../api/index.ts";
import type { Desired } from "../../external/index.ts";
import { NotThereYet } from "../statements/index.ts";
import { FormatError, secretData, type ConnectionValues } from "./connection-secret.ts";
import type { ServerDeps, SqlDeps } from "../deps.ts";
import { SqlReason as Reason } from "../../api/index.ts";
import type { SqlKind } from "../backend.ts";
import { controllerReference } from "../../runtime/port/kube-objects.ts";
import { readSecretKey } from "../secrets.ts";
import { firstOf, optionalSecret, pinnedReference } from "../unsupported.ts";

export interface ConnectionState {
  secretName: string;
  data: Record<string, string>;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  username: string;
  password: string;
  database?: string | undefined;
  /** The resourceVersion of the Secret when it exists (and is ours): an apply that changes nothing keeps it. */
  currentVersion?: string | undefined;
}

export function connectionHost(connection: SqlConnection, serviceDomain: string): string {
  const { spec } = connection;
  if (spec.host) return spec.host;
  const namespace = spec.mariaDbRef?.namespace || connection.metadata.namespace || "";
  const service = spec.serviceName || spec.mariaDbRef?.name || "";
  return `${service}.${namespace}.svc${serviceDomain}`;
}

async function connectionDesired(
  deps: SqlDeps,
  connection: SqlConnection,
): Promise<Desired<ConnectionState>> {
  const { spec, metadata } = connection;
  const namespace = metadata.namespace ?? "";
  if (!spec.passwordSecretKeyRef)
    return { outcome: "invalid", reason: "spec.passwordSecretKeyRef is required" };
  const password = await readSecretKey(deps, namespace, spec.passwordSecretKeyRef);
  if (password.outcome !== "ready") return password;
  const values: ConnectionValues = {
    username: spec.username,
    password: password.value,
    host: connectionHost(connection, deps.settings.serviceDomain),
    port: spec.port || deps.settings.serverPort,
    database: spec.database,
    params: spec.params ?? {},
  };
  let data: Record<string, string>;
  try {
    data = secretData(spec.secretTemplate, values);
  } catch (error) {
    if (error instanceof FormatError) return { outcome: "invalid", reason: error.message };
    throw error;
  }
  const secretName = spec.secretName || (metadata.name ?? "");
  const existing = await deps.kube.get(secretKind, { namespace, name: secretName });
  const ours = existing?.metadata?.ownerReferences?.some((o) => o.uid === metadata.uid) ?? false;
  if (existing && !ours) {
    return {
      outcome: "waiting",
      conditionReason: Reason.NotOwned,
      reason: `Secret ${namespace}/${secretName} exists and is not owned by this Connection; it is left alone`,
    };
  }
  return {
    outcome: "ready",
    spec: {
      secretName,
      data,
      labels: spec.secretTemplate?.metadata?.labels ?? {},
      annotations: spec.secretTemplate?.metadata?.annotations ?? {},
      username: spec.username,
      password: password.value,
      database: spec.database,
      currentVersion: existing?.metadata?.resourceVersion,
    },
    // The Secret's own version too: a change made to it out of band is repaired on the next pass.
    secretVersion: `${password.resourceVersion}/${existing?.metadata?.resourceVersion ?? ""}`,
    secrets: [password.value, encodeURIComponent(password.value), ...Object.values(data)],
  };
}

// Access denied (to the server, to the database), and an unknown database: the User, Grant or
// Database the Connection relies on is not there yet, and a later pass finds it.
const notYet = new Set([1044, 1045, 1049, 1698]);

async function checkLogin(deps: ServerDeps, state: ConnectionState): Promise<void> {
  try {
    await deps.server.login(state.username, state.password, state.database);
  } catch (error) {
    const errno = (error as { errno?: unknown }).errno;
    if (typeof errno === "number" && notYet.has(errno)) {
      const text = (error as { sqlMessage?: unknown }).sqlMessage;
      throw new NotThereYet(
        `'${state.username}' cannot log in yet: ${typeof text === "string" ? text : ""}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}

export const connection: SqlKind<SqlConnection, ConnectionState> = {
  kind: sqlConnectionKind,
  schema: SqlConnectionSchema,
  reference: (connection) => connection.spec.mariaDbRef ?? connection.spec.maxScaleRef,
  unsupported: ({ spec }) =>
    firstOf(
      spec.maxScaleRef ? "spec.maxScaleRef" : undefined,
      spec.tlsClientCertSecretRef ? "spec.tlsClientCertSecretRef" : undefined,
      pinnedReference("spec.mariaDbRef", spec.mariaDbRef),
      optionalSecret("spec.passwordSecretKeyRef", spec.passwordSecretKeyRef),
    ),
  secretsOf: ({ spec }) => (spec.passwordSecretKeyRef?.name ? [spec.passwordSecretKeyRef.name] : []),
  // The Secret it writes beside it, password or not.
  ownSecrets: true,
  desired: connectionDesired,
  async apply(deps, connection, state) {
    await checkLogin(deps, state);
    const { namespace = "" } = connection.metadata;
    const message = `Secret ${state.secretName} holds the connection of '${state.username}'`;
    // Applied on every pass that reaches the server: server-side apply leaves an unchanged Secret as it
    // is, and takes off a label or key this Connection no longer sets.
    const written = await deps.kube.apply(secretKind, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: state.secretName,
        namespace,
        labels: state.labels,
        annotations: state.annotations,
        ownerReferences: [controllerReference(sqlConnectionKind, connection.metadata)],
      },
      type: "Opaque",
      data: Object.fromEntries(
        Object.entries(state.data).map(([k, v]) => [k, Buffer.from(v).toString("base64")]),
      ),
    });
    if (written.metadata?.resourceVersion === state.currentVersion) return { message, changed: [] };
    return { message, changed: [state.currentVersion ? "secret" : "secret created"] };
  },
};
