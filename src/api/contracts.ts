// Strings that are a contract between the operator's rooms (the orders and the built-in controllers
// that serve their children) and with the upstream operators those controllers stand in for. Each
// lives here once; a room that writes one and a room that reads it import the same constant.

/** The label of a Secret the topology controller takes as credentials or a connection (upstream's). */
export const TOPOLOGY_SECRET_LABEL = "rabbitmq.com/topology-operator";

/** The label of a Secret the SQL controller watches for the objects that name it (mariadb-operator's). */
export const SQL_WATCH_LABEL = "k8s.mariadb.com/watch";

/** Ready's reason on a topology object its broker refused (upstream's), which the order reads as a refusal. */
export const FAILED_CREATE_OR_UPDATE = "FailedCreateOrUpdate";
