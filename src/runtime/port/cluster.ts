import type { KubeRest } from "./kube-rest.ts";

// What the runtime needs to know of a cluster; src/clusters decides which clusters exist.

export interface Cluster {
  /** "" for the management cluster, the kubeconfig Secret's name for a target cluster. */
  name: string;
  rest: KubeRest;
  /** When set, caches on this cluster are limited to these namespaces. */
  namespaces: string[] | undefined;
}

export interface ClusterSubscriber {
  engage(cluster: Cluster): void;
  disengage(name: string): void | Promise<void>;
}

export interface ClusterSource {
  subscribe(subscriber: ClusterSubscriber): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}
