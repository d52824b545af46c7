// The MariaDB leg's gates: the managed MariaDB a ControlPlane declares (the MariaDB, its credentials
// Secret, its Ready condition) and the address the delivered Secret names. Pure functions of what the
// reconciler read, in the shape of the core's gates and the RabbitMQ leg's wording.
import { parseServerCredentials } from "../../mariadb/credentials.ts";
import type { Endpoint } from "../core/endpoint.ts";
import {
  closed,
  open,
  publishedEndpointGate,
  retryAfter,
  type ClosedGate,
  type ControlPlaneView,
  type GateResult,
  type NamespacedName,
} from "../core/gates.ts";
import type { OrderKey } from "../core/naming.ts";
import { backoff, none } from "../core/requeue.ts";
import { REQUEUE } from "../core/conditions.ts";
import { messages, Reason, type ReasonName } from "./conditions.ts";

/** What the ControlPlane declares: the MariaDB and its credentials Secret, in its namespace. */
export interface DeclaredDatabase {
  mariadb: NamespacedName;
  secret: NamespacedName;
}

export function databaseGate(controlPlane: ControlPlaneView): GateResult<DeclaredDatabase> {
  const d = controlPlane.database;
  if (!d) {
    return closed({
      reason: Reason.DatabaseNotDeclared,
      message: messages.databaseNotDeclared(controlPlane),
      wake: none,
      scope: "both",
      frozen: false,
    });
  }
  const namespace = controlPlane.namespace;
  return open({
    mariadb: { namespace, name: d.clusterRef.name },
    secret: { namespace, name: d.secretRef.name },
  });
}

/** The MariaDB fields the gate reads. */
export interface MariaDBView {
  status?: { conditions?: readonly { type: string; status: string }[] | undefined } | undefined;
}

/** The managed MariaDB as the order uses it: its address and, with TLS, the CA that signs its certificate. */
export interface ManagedDatabase {
  mariadb: NamespacedName;
  /** The credentials Secret (the administrator's), read again where the order asks the server as it. */
  secret: NamespacedName;
  endpoint: Endpoint;
  ca?: string | undefined;
}

/**
 * The server is usable once the MariaDB and its credentials Secret exist with username, password, host
 * and port all non-empty (WaitingForDatabaseCredentials), and the MariaDB reports Ready
 * (WaitingForDatabase). The password is checked for presence only; it is never returned or quoted.
 */
export function serverGate(input: {
  declared: DeclaredDatabase;
  view: MariaDBView | undefined;
  secret: { data?: Record<string, string> | undefined } | undefined;
}): GateResult<ManagedDatabase> {
  const { mariadb, secret } = input.declared;
  const wait = (reason: ReasonName, message: string) =>
    closed<ManagedDatabase>({
      reason,
      message,
      wake: retryAfter(REQUEUE.short),
      scope: "both",
      frozen: false,
    });
  const credentials = (message: string) => wait(Reason.WaitingForDatabaseCredentials, message);
  if (!input.view) return credentials(messages.mariadbMissing(mariadb));
  if (!input.secret) return credentials(messages.credentialsSecretMissing(mariadb, secret));
  const read = parseServerCredentials(input.secret.data);
  if (read.outcome === "incomplete")
    return credentials(messages.credentialsSecretIncomplete(secret, read.missing));
  if (read.outcome === "badPort") return credentials(messages.credentialsSecretBadPort(secret, read.message));
  if (read.outcome === "badHost") return credentials(messages.credentialsSecretBadHost(secret, read.message));
  const ready = input.view.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
  if (!ready) return wait(Reason.WaitingForDatabase, messages.waitingForDatabase(mariadb));
  const { host, port, ca } = read.credentials;
  return open({ mariadb, secret, endpoint: { host, port }, ca });
}

/** Reading the ControlPlane's MariaDB failed at the Kubernetes level; retried with backoff. */
export function serverReadError(what: string, cause: string): ClosedGate {
  const message = messages.serverReadFailed(what, cause);
  return {
    reason: Reason.DatabaseError,
    message,
    wake: backoff(message),
    scope: "both",
    frozen: false,
  };
}

/**
 * The address the delivered Secret names: the server's own on the management cluster, the ControlPlane's
 * published endpoint on a target cluster (DatabaseNotPublished without it, DeliveryError when it does not
 * parse).
 */
export function deliveryEndpointGate(
  order: OrderKey,
  controlPlane: ControlPlaneView,
  server: ManagedDatabase,
): GateResult<Endpoint> {
  return publishedEndpointGate(order, server.endpoint, {
    text: controlPlane.publishedDatabaseEndpoint,
    what: "published database endpoint",
    notPublished: {
      reason: Reason.DatabaseNotPublished,
      message: messages.databaseNotPublished(controlPlane, order.cluster),
    },
  });
}
