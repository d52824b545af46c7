// An order kind as the order machinery sees it. Everything that depends on the backend (RabbitMQ,
// MariaDB) is behind this definition: the kind and its names, the condition vocabulary, the backend
// gate, the container child and the per-generation children, the successor check, the delivered keys.
// The core (consent, secret-store gate, generations, backup before delivery, delivery, teardown,
// status, requeue) drives it; src/orders/rabbitmq/kind.ts is the RabbitMQVhost leg.
import type { ConnectionCount, LoginCount } from "./connections.ts";
import type { KindRef, ObjectMeta } from "../../api/index.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import type { Endpoint } from "./endpoint.ts";
import type { ControlPlaneView, GateResult } from "./gates.ts";
import type {
  ChildAction,
  ChildObject,
  ChildReadiness,
  GenerationChildren,
  ResourceView,
  SwitchCheck,
  ViewWords,
} from "./generations.ts";
import type { NamingScheme, OrderIdentity, OrderKey } from "./naming.ts";
import type { EventTypes } from "./types.ts";

/** The fields every order kind has in its spec. */
export interface OrderSpec {
  controlPlaneRef: { name: string; namespace?: string | undefined };
  passwordGeneration?: number | undefined;
  rotation?:
    | {
        interval?: string | undefined;
        gracePeriod?: string | undefined;
        window?: { schedule: string; timeZone?: string | undefined; duration: string } | undefined;
      }
    | undefined;
  deletionPolicy?: string | undefined;
}

/** The status fields every order kind has, plus the kind's resource field (e.g. `vhost`). */
export interface OrderStatus {
  conditions?: {
    type: string;
    status: string;
    reason: string;
    message: string;
    observedGeneration?: number | undefined;
    lastTransitionTime: string;
  }[];
  observedGeneration?: number | undefined;
  username?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
  passwordGeneration?: number | undefined;
  lastRotation?: string | undefined;
  nextRotation?: string | undefined;
  previousPasswordGeneration?: number | undefined;
  previousPasswordDeleteAt?: string | undefined;
  previousPasswordLogins?: number | undefined;
  previousPasswordLoginsSince?: number | undefined;
  secretName?: string | undefined;
  secretKeys?: string[] | undefined;
  /** The backend the delivered user is on, and a migration under way (migration.ts). */
  backend?: string | undefined;
  migration?: { from: string; to: string; phase: string } | undefined;
  [field: string]: unknown;
}

export interface OrderObject {
  metadata: ObjectMeta;
  spec: OrderSpec;
  status?: OrderStatus | undefined;
}

/** An order its kind's schema read, or the fields it refuses (order-schema.ts). */
export type ParsedOrder =
  | { order: OrderObject; issues?: undefined }
  | { order?: undefined; issues: { path: string; message: string }[] };

/** Where the children go: the ControlPlane's namespace and the backend object they name. */
export interface ChildPlace {
  namespace: string;
  /** The RabbitmqCluster (or MariaDB) the children reference, in that namespace. */
  backend: string;
  /** The resource on the backend the children make (the vhost, the database). */
  resource: string;
  /** The container child's name on that backend (containers.ts). */
  container: string;
}

/** What the backend gate hands on: the backend object and its in-cluster address. */
export interface Backend {
  name: string;
  endpoint: Endpoint;
}

/** The container child (the Vhost CR): applied, not served, or refused by name. */
export type ContainerOutcome = { kind: "notServed" } | { kind: "applied"; object: ChildObject };

/** A backend object whose changes wake the orders of the ControlPlanes that name it (a RabbitmqCluster). */
export interface BackendWatch {
  kind: KindRef;
  labelSelector?: string | undefined;
  /** The ControlPlanes, among those cached, whose backend `object` is. */
  controlPlanesOf(object: KubeObject, controlPlanes: KubeObject[]): KubeObject[];
}

/** The successor's credentials and the backend's address, for the check before a switch. */
export interface SuccessorLogin {
  host: string;
  port: number;
  resource: string;
  username: string;
  password: string;
}

/** The order's per-generation children, as listed: the generation functions' view plus the passwords. */
export interface GenerationListing {
  generations: GenerationChildren[];
  /** Generation N's password ("" when its Secret lost it). */
  passwordOf(generation: number): string;
}

/** What a removal of stray accounts did: the accounts removed, and why it stopped short, if it did. */
export interface StrayRemoval {
  removed: string[];
  failure?: string | undefined;
}

export interface OrderKind<B extends Backend = Backend> {
  /** The controller's name in logs and metrics. */
  controller: string;
  /** The order's group, version and kind (and its plural). */
  gvk: KindRef;
  naming: NamingScheme;
  /** The order as read from the API server, or what the kind's schema refuses of it. */
  parse(raw: unknown): ParsedOrder;

  /** The kind's reasons whose False transition is a Normal event (a wait) or none (transient). */
  eventTypes?: EventTypes;

  /** The kind's resource condition (VhostReady) and its status field (vhost). */
  resourceCondition: string;
  resourceStatusField: string;
  /** The resource on the backend (the vhost, the database) the order holds. */
  resource(order: OrderObject, key: OrderKey): string;
  /** How the resource condition's messages name the kind's pieces. */
  words: ViewWords;
  /** How the operator serving the children reports on them. */
  childReadiness: ChildReadiness;
  /** Reasons of the resource condition the core sets. */
  reasons: {
    error: string;
    backendNotInstalled: string;
    waitingForContainer: string;
    containerFailed: string;
    /** The generation machine's view reasons, in the kind's words. */
    view: Record<ResourceView["reason"], string>;
  };
  messages: {
    allReady(): string;
    delivered(secret: string, namespace: string, cluster: string): string;
    backendNotInstalled(): string;
    waitingForContainer(resource: string): string;
    containerFailed(resource: string, message: string): string;
  };

  /** The backend objects the order controller watches. */
  backendWatches: readonly BackendWatch[];
  /** The backend gate: reads the ControlPlane's backend on the management cluster. */
  backend(management: Kube, controlPlane: ControlPlaneView): Promise<GateResult<B>>;
  /**
   * A backend the order's children name that the ControlPlane no longer does (a migration's old one),
   * read by name in the ControlPlane's namespace: undefined when its object is gone. Absent for a kind
   * that cannot reach such a backend (its credentials are the ControlPlane's): the old backend's sessions
   * then read as unknown, and the delivered Secret is left as it is until the switch.
   */
  backendNamed?(
    management: Kube,
    controlPlane: ControlPlaneView,
    name: string,
  ): Promise<GateResult<B> | undefined>;
  /** How the resource condition and Events name a backend object: "RabbitmqCluster", "MariaDB". */
  backendKind: string;
  /** The address the delivered Secret names (the published one on a target cluster). */
  deliveryEndpoint(order: OrderKey, controlPlane: ControlPlaneView, backend: B): GateResult<Endpoint>;

  /** The container child: makes it carry the order's resource and deletion policy. */
  applyContainer(
    management: Kube,
    order: OrderIdentity,
    place: ChildPlace,
    deletionPolicy: "retain" | "delete",
  ): Promise<ContainerOutcome>;
  /** The container child's kind and name, its applied spec without the policy, and the policy's fields. */
  container: {
    gvk: KindRef;
    /** The base name; a container on a backend the order moved to gets the backend's hash after it. */
    name(order: OrderKey): string;
    /** The spec field that names the container's backend (`{ name }`). */
    backendRef: string;
    spec(object: unknown): Record<string, unknown>;
    policy(deletionPolicy: "retain" | "delete"): Record<string, unknown>;
    /**
     * Whether the container's operator has taken up the policy it carries, so that deleting it does what
     * the policy says (absent: at once, as the topology operator reads the policy when it deletes).
     */
    settled?(object: KubeObject): boolean;
  };
  /** Lists the per-generation children the order owns. */
  listGenerations(management: Kube, order: OrderIdentity, namespace: string): Promise<GenerationListing>;
  /** Performs one write of the generation plan. */
  performAction(
    management: Kube,
    order: OrderIdentity,
    place: ChildPlace,
    action: ChildAction,
  ): Promise<void>;
  /** Generation N's account on the backend. */
  userName(order: OrderKey, generation: number): string;
  /** The child kinds the teardown deletes before the container, in order (access child, account child). */
  teardownKinds: readonly KindRef[];

  /** Checks that the backend accepts a successor's credentials before the switch. */
  successorCheck(
    management: Kube,
    backend: B,
    login: SuccessorLogin,
    timeoutMs: number,
  ): Promise<SwitchCheck>;

  /**
   * Removes the backend's accounts of the order's resource that `stray` says no child declares (asked
   * once per sweep); absent for a kind whose backend cannot list them. `order` is the order whose
   * accounts they are (a backend that lists accounts by name lists those of its naming scheme).
   */
  removeStrayAccounts?(
    management: Kube,
    backend: B,
    resource: string,
    stray: (username: string) => boolean,
    timeoutMs: number,
    order: OrderKey,
    /** Accounts the pass knows by name that a listing may miss (a swept generation whose account child was gone). */
    known: readonly string[],
  ): Promise<StrayRemoval>;

  /** How many sessions of `username` the backend lists now (the sweep's hold waits while there are any). */
  connectionsOf(management: Kube, backend: B, username: string, timeoutMs: number): Promise<ConnectionCount>;
  /**
   * The successful logins of `username` the backend recorded (read at the switch and again at the sweep,
   * which waits while there are more); absent for a backend that keeps no such records.
   */
  loginsOf?(management: Kube, backend: B, username: string, timeoutMs: number): Promise<LoginCount>;

  /** The delivered Secret's keys, as status.secretKeys lists them (a key the backend may lack included). */
  deliveredKeys: readonly string[];
  /** The delivered keys and their values, in the order status.secretKeys lists them. */
  deliveredData(input: {
    endpoint: Endpoint;
    resource: string;
    username: string;
    password: string;
    backend: B;
  }): Record<string, string>;
}
