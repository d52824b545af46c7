// vhost-broker's process: the RabbitMQVhost order controller (and, with mariadb-orders, the
// MariaDBDatabase one) on every engaged cluster and, unless it is switched off, the built-in topology
// controller for the seven rabbitmq.com kinds; when switched on, the built-in SQL controller for the
// four mariadb.osh.openstack.org kinds.
import { orderKinds } from "./operator/order-kinds.ts";
import { openBaoStore } from "./backup/openbao.ts";
import { recentConfirmations } from "./backup/recent-confirmations.ts";
import { sharedHealth } from "./backup/shared-health.ts";
import { containPluginFailures } from "./gatekeeper/containment.ts";
import { GatekeeperStartError } from "./gatekeeper/loader.ts";
import { startGatekeeper } from "./operator/gatekeeper.ts";
import { requireAnyServedKind } from "./clusters/served-kind.ts";
import { registryFromSettings } from "./clusters/registry.ts";
import { backupSettings } from "./operator/backup.ts";
import { brokerConnections } from "./operator/broker.ts";
import { DomainMetrics } from "./operator/domain-metrics.ts";
import { instrumentedStore } from "./operator/instrumented-store.ts";
import { mariadbTransport } from "./operator/mariadb.ts";
import { orderControllerDeps } from "./operator/order-deps.ts";
import { orderController } from "./orders/core/controller.ts";
import { operatorSettings, type OperatorConfig } from "./operator/settings.ts";
import { externalEvents } from "./operator/external-events.ts";
import { sqlDeps, sqlLanes, sqlServedKinds } from "./operator/sql.ts";
import { topologyDeps, topologyLanes } from "./operator/topology.ts";
import { runCheck } from "./operator/check/run.ts";
import { runProgram } from "./runtime/process/bootstrap.ts";
import { EventRecorder } from "./runtime/port/events.ts";
import { SettingsError } from "./runtime/process/settings.ts";
import { sqlControllers } from "./sql/index.ts";
import {
  runBrokerChecks,
  topologyControllerKinds,
  topologyControllers,
  topologyWake,
} from "./topology/index.ts";

// `vhost-broker check` is the post-install check the chart's helm test runs, not the operator.
if (process.argv[2] === "check") process.exit(await runCheck(process.argv.slice(3), process.env));

const exitCode = await runProgram({
  name: "vhost-broker",
  settings: operatorSettings,
  // A target cluster is engaged once it serves an order kind this operator serves; until then it is
  // retried with backoff.
  clusters: (context) =>
    registryFromSettings(context, (rest) =>
      requireAnyServedKind(
        rest,
        orderKinds(context.config as OperatorConfig).map((k) => k.gvk),
      ),
    ),
  controllers: async (manager, { config, management, clock, log, metrics, podName }) => {
    const operator = config as OperatorConfig;
    // Every write to a backend asks the manager's Lease fence first (runtime/leadership/lease-fence.ts); the
    // Kubernetes port of each engaged cluster is fenced by the manager itself.
    const fence = manager.fence;
    // A plugin's stray throw or rejection fails its hook, not the process (gatekeeper/containment.ts).
    containPluginFailures(log);
    const gatekeeper = await startGatekeeper({ config: operator, management, clock, log, metrics, fence });
    const domain = new DomainMetrics(
      metrics.registry,
      manager,
      {
        orders: orderKinds(operator).map((k) => k.gvk),
        topology: operator["topology-controller"] ? topologyControllerKinds.map((k) => k.kind) : [],
        ...(operator["sql-controller"] ? { sql: sqlServedKinds(operator) } : {}),
      },
      { readyStatus: operator["per-object-ready-metrics"] },
    );
    const events = new EventRecorder({
      controller: "c5c3.io/vhost-broker",
      instance: podName,
      clock,
      log,
      fence,
    });
    // Health checks counted in the metrics are the requests OpenBao really got. A backup seen in place is
    // trusted for half the drift resync's shortest wait: a drift check reads it unless a pass just did.
    const store = recentConfirmations(
      sharedHealth(instrumentedStore(openBaoStore(backupSettings(operator), { fence }), domain), clock),
      clock,
      operator["drift-resync-min"] / 2,
    );
    // One set of broker clients for the topology controller and the order leg alike.
    const broker = brokerConnections(
      operator,
      (method, seconds) => domain.backendLatency.observe({ backend: "rabbitmq", operation: method }, seconds),
      fence,
    );
    // One MariaDB transport (TLS, CA, client certificate, deadlines) for the SQL controller and the
    // MariaDBDatabase leg alike.
    const mariadb =
      operator["mariadb-orders"] || operator["sql-controller"] ? mariadbTransport(operator) : undefined;
    // Over TLS the orders' accounts REQUIRE X509: without a certificate no successor check can pass.
    if (operator["mariadb-orders"] && mariadb?.tls && !mariadb.client)
      log.warn(
        { settings: ["mariadb-tls-cert-file", "mariadb-tls-key-file"] },
        "MariaDB is reached over TLS, so new MariaDBDatabase accounts REQUIRE X509, and no client certificate is set: their successor checks will be refused",
      );
    for (const kind of orderKinds(operator, fence, broker, mariadb)) {
      manager.add(
        orderController(
          kind,
          orderControllerDeps(kind, operator, { manager, store, metrics: domain, clock, events, gatekeeper }),
        ),
      );
    }
    if (operator["topology-controller"]) {
      const deps = {
        ...topologyDeps(operator, clock, broker, externalEvents(events, management), gatekeeper),
        wake: topologyWake(manager),
      };
      const vhostWorkers = operator["topology-vhost-concurrent-reconciles"];
      const lanes = topologyLanes(
        operator,
        (kind, object, event) => void events.emit(management, kind, object, event),
      );
      for (const spec of topologyControllers(manager, deps, vhostWorkers, lanes)) manager.add(spec);
      runBrokerChecks({ ...deps, logger: log }, clock);
    }
    if (operator["sql-controller"]) {
      const deps = sqlDeps(operator, clock, externalEvents(events, management), gatekeeper, fence, mariadb);
      const lanes = sqlLanes(
        operator,
        (kind, object, event) => void events.emit(management, kind, object, event),
      );
      for (const spec of sqlControllers(manager, deps, lanes)) manager.add(spec);
    }
  },
}).catch((error: unknown) => {
  // Settings that only make sense together (e.g. OpenBao's auth) are checked while the controllers
  // are built; like any bad setting they stop start-up with the setting's name.
  // So does a gatekeeper plugin that cannot be loaded or configured.
  if (!(error instanceof SettingsError) && !(error instanceof GatekeeperStartError)) throw error;
  process.stderr.write(`vhost-broker: ${error.message}\n`);
  return 2;
});
process.exit(exitCode);
