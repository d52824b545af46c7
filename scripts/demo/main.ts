// The main job on the local environment: the CRDs, a managed bus (a RabbitmqCluster stand-in pointing
// at the local broker) in namespace `openstack`, the ControlPlane `cp` assigning `tenant-a`, the
// example order `workflow` of the specification, and then the operator itself, in the foreground.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as k8s from "@kubernetes/client-node";
import {
  createControlPlane,
  createExampleOrder,
  createManagedBus,
  ensureNamespace,
  installCrds,
  localBrokerFromEnv,
} from "../../harness/world/managed-bus.ts";

const config = new k8s.KubeConfig();
config.loadFromDefault();
await installCrds(config);
await createManagedBus(config, "openstack", localBrokerFromEnv());
await ensureNamespace(config, "tenant-a");
await ensureNamespace(config, "vhost-broker-system");
await createControlPlane(config, "openstack", "cp", [{ namespace: "tenant-a" }]);
await createExampleOrder(config, "tenant-a", { name: "cp", namespace: "openstack" });
process.stderr.write("order tenant-a/workflow created; starting the operator (Ctrl-C stops it)\n");

const main = fileURLToPath(new URL("../../src/main.ts", import.meta.url));
const operator = spawn(
  process.execPath,
  [
    main,
    `--openbao-address=${process.env.BAO_ADDR ?? ""}`,
    "--metrics-bind-address=127.0.0.1:8080",
    "--metrics-secure=false",
    "--health-probe-bind-address=127.0.0.1:8081",
  ],
  { stdio: "inherit", env: { ...process.env, VHOST_BROKER_OPENBAO_TOKEN: process.env.BAO_TOKEN ?? "" } },
);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => operator.kill(signal));
operator.on("exit", (code) => process.exit(code ?? 1));
