// The operator's settings: the runtime's, plus the order reconciler's (OpenBao, the pre-switch broker
// check), the built-in topology controller's and the built-in SQL controller's. Each is a flag and a
// VHOST_BROKER_* variable.
import { z } from "zod";
import { defaultPlugins, pluginList } from "../gatekeeper/loader.ts";
import { runtimeSettings } from "../runtime/process/config.ts";
import { SUCCESSOR_CHECKS } from "../orders/rabbitmq/successor-check.ts";
import {
  booleanText,
  deadline,
  duration,
  integerText,
  setting,
  type SettingGroup,
  type SettingValues,
} from "../runtime/process/settings.ts";

export const operatorSettings = {
  ...runtimeSettings,
  "openbao-address": setting({
    description: "OpenBao's address, e.g. https://openbao.openbao.svc:8200",
    schema: z.url({ protocol: /^https?$/, message: "must be an http(s) URL" }),
  }),
  "openbao-auth": setting({
    description: "how the operator logs in to OpenBao: token, or kubernetes (its service-account token)",
    schema: z.enum(["token", "kubernetes"]),
    default: "token",
  }),
  "openbao-token": setting({
    description:
      "OpenBao token for openbao-auth=token (pass it as VHOST_BROKER_OPENBAO_TOKEN, not as a flag)",
    schema: z.string(),
    default: "",
  }),
  "openbao-role": setting({
    description: "OpenBao role for openbao-auth=kubernetes",
    schema: z.string(),
    default: "",
  }),
  "openbao-auth-mount": setting({
    description: "where OpenBao's Kubernetes auth method is mounted",
    schema: z.string().min(1, "must not be empty"),
    default: "kubernetes",
  }),
  "openbao-token-file": setting({
    description: "service-account token presented to OpenBao's Kubernetes auth",
    schema: z.string().min(1, "must not be empty"),
    default: "/var/run/secrets/kubernetes.io/serviceaccount/token",
  }),
  "openbao-mount": setting({
    description: "the KV v2 mount the credentials are backed up to",
    schema: z.string().min(1, "must not be empty"),
    default: "kv-v2",
  }),
  "successor-check": setting({
    description:
      "how a successor user is checked against the broker before the switch: hash (the stored password hash and the permission on the vhost, through the management API), amqp (a login) or none",
    schema: z.enum(SUCCESSOR_CHECKS),
    default: "hash",
  }),
  "connection-wait-interval": setting({
    description:
      "how often a topology object waiting for its broker or for an object it depends on is looked at again (a RabbitmqCluster change wakes it at once)",
    schema: duration,
    default: "10s",
  }),
  "backend-request-timeout": setting({
    description:
      "deadline of one request to OpenBao or to a broker's management API, and of one connection attempt to MariaDB",
    schema: deadline,
    default: "10s",
  }),
  "order-concurrent-reconciles": setting({
    description:
      "workers of each order controller: a pass waits on the API server, OpenBao and the broker in turn, so more of them run at once than a topology controller's",
    schema: integerText(1),
    default: "16",
  }),
  "broker-check-timeout": setting({
    description: "how long the check of a successor user before the switch may take",
    schema: deadline,
    default: "10s",
  }),
  "orphan-removal-delay": setting({
    description:
      "how long the children of an order that no longer exists (its finalizer stripped, an older etcd snapshot) wait before they are removed, with their broker users and backup: long enough for a restore or a target cluster registered again to bring the order back",
    schema: duration,
    default: "10m",
  }),
  "sweep-hold": setting({
    description:
      "how long past its grace period a superseded user stays while the broker (or the SQL server) still lists connections of it; then it is deleted anyway (the broker closes them; a MariaDB session outlives its dropped account, new logins fail). Long enough for a consumer's reconnect or a rollout to pick up the new Secret, short enough that a superseded password does not outlive its purpose by days",
    schema: duration,
    default: "1h",
  }),
  "namespace-rotation-limit": setting({
    description:
      "how many rotations the orders of one kind in one namespace may start within --namespace-rotation-window (0: no bound); a rotation past it waits, its delivered user still valid, so that a tenant raising spec.passwordGeneration in a loop does not keep the broker busy for every other tenant",
    schema: integerText(0),
    default: "60",
  }),
  "namespace-rotation-window": setting({
    description: "the window --namespace-rotation-limit counts in",
    schema: duration,
    default: "10m",
  }),
  "per-object-ready-metrics": setting({
    description:
      "export the Ready condition of each order and of each topology and SQL object served (vhost_broker_*_ready_status, three series an object); false drops them at very large sizes, and the NotReady alerts then see nothing",
    schema: booleanText,
    default: "true",
    boolean: true,
  }),
  "topology-controller": setting({
    description:
      "serve the seven rabbitmq.com kinds with the built-in controller (false when upstream's runs)",
    schema: booleanText,
    default: "true",
    boolean: true,
  }),
  "topology-clusters": setting({
    description:
      "which RabbitmqCluster references the built-in controller serves: all, none, names:<name|ns/name>,..., or annotation:<key>[=<value>]",
    schema: z
      .string()
      .regex(
        /^(all|none|names:[^,]+(,[^,]+)*|annotation:[^=]+(=.*)?)$/,
        "must be all, none, names:... or annotation:...",
      ),
    default: "all",
  }),
  "topology-connection-secrets": setting({
    description: "serve resources that reference their broker through a connectionSecret",
    schema: booleanText,
    default: "true",
    boolean: true,
  }),
  "topology-verification-period": setting({
    description: "how often each served object is read back from the broker and repaired",
    schema: duration,
    default: "5m",
  }),
  "topology-broker-check-interval": setting({
    description:
      "how often each broker is asked whether it lost its definitions (restarted empty), so that every object on it is declared again at once rather than at its next verification; 0 = never",
    schema: duration,
    default: "15s",
  }),
  "topology-vhost-concurrent-reconciles": setting({
    description:
      "workers of the topology controller's Vhost kind: the broker creates vhosts one at a time, so more of them than this wait on it rather than go faster",
    schema: integerText(1),
    default: "4",
  }),
  "topology-concurrent-brokers": setting({
    description:
      "brokers each topology kind works on at once, each in a lane of its own with that kind's workers (max-concurrent-reconciles, the Vhosts' topology-vhost-concurrent-reconciles): a slow or hung broker holds only its lane",
    schema: integerText(1),
    default: "4",
  }),
  "topology-delete-guest-user": setting({
    description: "delete the broker's guest user on every verification",
    schema: booleanText,
    default: "false",
    boolean: true,
  }),
  "messaging-domain": setting({
    description: "appended to <service>.<namespace>.svc for brokers' management URLs, e.g. .cluster.local",
    schema: z.string(),
    default: "",
  }),
  "gatekeeper-default-plugins": setting({
    description:
      "the gatekeeper's default plugins, comma-separated, in entry order: shipped names, npm package names or ES module paths; set (even empty) it replaces the defaults",
    schema: z.string().transform(pluginList),
    default: defaultPlugins.join(","),
  }),
  "gatekeeper-custom-plugins": setting({
    description:
      "the gatekeeper's custom plugins, comma-separated, in entry order (they enter first and exit last): shipped names, npm package names or ES module paths",
    schema: z.string().transform(pluginList),
    default: "",
  }),
  "gatekeeper-hook-timeout": setting({
    description:
      "how long one gatekeeper plugin hook may take; past it the hook fails (the pass is rejected, or its exit fails) and its late result is discarded",
    schema: deadline,
    default: "10s",
  }),
  "broker-ca-file": setting({
    description: "PEM bundle trusted for https management APIs; empty = the system's",
    schema: z.string(),
    default: "",
  }),
  "mariadb-orders": setting({
    description:
      "serve MariaDBDatabase orders; the management cluster must serve mariadb.osh.openstack.org (sql-controller or another operator) and mariadb-operator's MariaDB kind",
    schema: booleanText,
    default: "false",
    boolean: true,
  }),
  "sql-controller": setting({
    description:
      "serve the four mariadb.osh.openstack.org kinds (Database, User, Grant, Connection) with the built-in SQL controller against the servers ControlPlanes declare (spec.infrastructure.database) and the one mariadb-host names",
    schema: booleanText,
    default: "false",
    boolean: true,
  }),
  "sql-mariadb-refs": setting({
    description:
      "which mariaDbRefs the built-in SQL controller serves: all, none, or names:<name|ns/name>,...",
    schema: z.string().regex(/^(all|none|names:[^,]+(,[^,]+)*)$/, "must be all, none or names:..."),
    default: "all",
  }),
  "sql-concurrent-servers": setting({
    description:
      "MariaDB servers (mariaDbRefs) each SQL kind works on at once, each in a lane of its own with max-concurrent-reconciles workers: a slow or hung server holds only its lane",
    schema: integerText(1),
    default: "4",
  }),
  "sql-verification-period": setting({
    description:
      "how often each served SQL object is verified against its server's catalogue, read once a period per server, and repaired",
    schema: duration,
    default: "5m",
  }),
  "sql-service-domain": setting({
    description:
      "appended to <service>.<namespace>.svc in the host a Connection writes when it names no host",
    schema: z.string(),
    default: ".cluster.local",
  }),
  "mariadb-host": setting({
    description:
      "the MariaDB server the SQL controller administers for mariaDbRefs no ControlPlane declares, e.g. mariadb.openstack.svc; empty = only the servers ControlPlanes declare",
    schema: z.string(),
    default: "",
  }),
  "mariadb-port": setting({
    description: "the MariaDB server's port",
    schema: integerText(1).pipe(z.number().max(65535)),
    default: "3306",
  }),
  "mariadb-username": setting({
    description: "the administrative account the SQL controller logs in as",
    schema: z.string().min(1, "must not be empty"),
    default: "root",
  }),
  "mariadb-password": setting({
    description:
      "the administrative account's password (pass it as VHOST_BROKER_MARIADB_PASSWORD, not as a flag); read once, so a rotation needs a restart: see mariadb-password-file",
    schema: z.string(),
    default: "",
  }),
  "mariadb-password-file": setting({
    description:
      "a file holding the administrative account's password (a trailing line break is dropped), e.g. a mounted Secret: read again every connection-wait-interval and at once after a refused login, so a rotated password is used without a restart; not with mariadb-password",
    schema: z.string(),
    default: "",
  }),
  "mariadb-tls": setting({
    description:
      "connect to MariaDB over TLS, verifying the server's certificate, and declare the MariaDBDatabase orders' accounts REQUIRE X509",
    schema: booleanText,
    default: "false",
    boolean: true,
  }),
  "mariadb-statement-timeout": setting({
    description:
      "deadline of one statement to the MariaDB server, also its lock waits there (a DROP waiting on another session's lock gives up)",
    schema: deadline,
    default: "30s",
  }),
  "mariadb-ca-file": setting({
    description:
      "PEM bundle trusted for the MariaDB server's certificate (implies mariadb-tls); a ControlPlane's credentials Secret's ca.crt wins for its server; empty = the system's",
    schema: z.string(),
    default: "",
  }),
  "mariadb-tls-cert-file": setting({
    description:
      "PEM client certificate every MariaDB connection presents (implies mariadb-tls; needs mariadb-tls-key-file): the administrator's, and the successor's login check of accounts that REQUIRE X509",
    schema: z.string(),
    default: "",
  }),
  "mariadb-tls-key-file": setting({
    description: "PEM private key of mariadb-tls-cert-file",
    schema: z.string(),
    default: "",
  }),
  "mariadb-tenant-tls-dir": setting({
    description:
      "with mariadb-tls, the folder a MariaDBDatabase order's delivered connection URL names for the tenant's TLS files: ssl_ca=<dir>/ca.crt (the CA, delivered in the Secret), ssl_cert=<dir>/tls.crt and ssl_key=<dir>/tls.key (the client certificate the deployment provides), as OpenStack-Helm mounts them",
    schema: z
      .string()
      .regex(/^\/[A-Za-z0-9._/-]*$/, "an absolute path of letters, digits, '.', '_', '-' and '/'"),
    default: "/etc/mysql/certs",
  }),
} satisfies SettingGroup;

export type OperatorConfig = SettingValues<typeof operatorSettings>;
