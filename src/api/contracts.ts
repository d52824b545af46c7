// Strings that are a contract between the operator's rooms (the orders and the built-in controllers
// that serve their children) and with the upstream operators those controllers stand in for. Each
// lives here once; a room that writes one and a room that reads it import the same constant.

/** The label of a Secret the topology controller takes as credentials or a connection (upstream's). */
export const TOPOLOGY_SECRET_LABEL = "rabbitmq.com/topology-operator";

/** The label of a Secret the SQL controller watches for the objects that name it (mariadb-operator's). */
export const SQL_WATCH_LABEL = "k8s.mariadb.com/watch";

/** Ready's reason on a topology object its broker refused (upstream's), which the order reads as a refusal. */
export const FAILED_CREATE_OR_UPDATE = "FailedCreateOrUpdate";

/** The prefix of the labels and annotation that name a RabbitMQVhost on its children (orderChildKeys). */
export const RABBITMQVHOST_CHILD_PREFIX = "c5c3.io/rabbitmqvhost";

/** An order annotated `c5c3.io/paused: "true"` is neither rotated, swept nor repaired until it goes. */
export const PAUSED_ANNOTATION = "c5c3.io/paused";

/** The same for a MariaDBDatabase. */
export const MARIADBDATABASE_CHILD_PREFIX = "c5c3.io/mariadbdatabase";

/**
 * How a child on the management cluster names the order that made it: the labels `<prefix>-name`,
 * `-namespace` and `-cluster` ("" for the management cluster) and the annotation `<prefix>-uid`. The
 * orders write them; the gatekeeper's order-quota reads them as evidence a tenant cannot forge.
 */
export const orderChildKeys = (prefix: string) => ({
  name: `${prefix}-name`,
  namespace: `${prefix}-namespace`,
  cluster: `${prefix}-cluster`,
  uid: `${prefix}-uid`,
});
