// Reads the CRD manifests in crds/, the source of truth of every kind. The shipped CRDs are crds/*.yaml;
// crds/localenv/ holds stand-ins for the local environment and tests only.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { V1CustomResourceDefinition } from "@kubernetes/client-node";
import { parse } from "yaml";

export const crdDirectory = fileURLToPath(new URL("../../crds/", import.meta.url));

function readDirectory(directory: string): V1CustomResourceDefinition[] {
  return readdirSync(directory)
    .filter((file) => file.endsWith(".yaml"))
    .sort()
    .map((file) => parse(readFileSync(join(directory, file), "utf8")) as V1CustomResourceDefinition);
}

/** The CRDs vhost-broker ships: RabbitMQVhost, ControlPlane and the seven rabbitmq.com kinds. */
export function shippedCrds(): V1CustomResourceDefinition[] {
  return readDirectory(crdDirectory);
}

/** CRDs that stand in for other operators' kinds in the local environment (RabbitmqCluster). */
export function localEnvCrds(): V1CustomResourceDefinition[] {
  return readDirectory(join(crdDirectory, "localenv"));
}

/** One CRD by its name, e.g. "rabbitmqvhosts.c5c3.io", shipped or local-environment. */
export function crdNamed(name: string): V1CustomResourceDefinition {
  const crd = [...shippedCrds(), ...localEnvCrds()].find((c) => c.metadata?.name === name);
  if (!crd) throw new Error(`no CRD named ${name} in ${crdDirectory}`);
  return crd;
}
