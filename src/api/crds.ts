// Reads the CRD manifests in crds/, the source of truth of every kind. The shipped CRDs are crds/*.yaml;
// crds/localenv/ holds stand-ins for the local environment and tests only. The objects are parsed YAML
// with the JSON field names (`x-kubernetes-validations`, `enum`, `default`); to send one through
// client-node, load the file named by crdPath with client-node's own YAML loader instead, whose typed
// models would otherwise drop those keys.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { V1CustomResourceDefinition } from "@kubernetes/client-node";
import { parse } from "yaml";

export const crdDirectory = fileURLToPath(new URL("../../crds/", import.meta.url));

function filesIn(directory: string): string[] {
  return readdirSync(directory)
    .filter((file) => file.endsWith(".yaml"))
    .sort()
    .map((file) => join(directory, file));
}

function readDirectory(directory: string): V1CustomResourceDefinition[] {
  return filesIn(directory).map((path) => parse(readFileSync(path, "utf8")) as V1CustomResourceDefinition);
}

/** The CRDs vhost-broker ships: RabbitMQVhost, ControlPlane and the seven rabbitmq.com kinds. */
export function shippedCrds(): V1CustomResourceDefinition[] {
  return readDirectory(crdDirectory);
}

/** CRDs that stand in for other operators' kinds in the local environment (RabbitmqCluster). */
export function localEnvCrds(): V1CustomResourceDefinition[] {
  return readDirectory(join(crdDirectory, "localenv"));
}

/** The file holding the CRD of that name, e.g. "rabbitmqvhosts.c5c3.io", shipped or local-environment. */
export function crdPath(name: string): string {
  const path = [...filesIn(crdDirectory), ...filesIn(join(crdDirectory, "localenv"))].find(
    (file) => (parse(readFileSync(file, "utf8")) as V1CustomResourceDefinition).metadata?.name === name,
  );
  if (!path) throw new Error(`no CRD named ${name} in ${crdDirectory}`);
  return path;
}
