// The Kubernetes port in memory, for fast whole-pass tests: objects keyed by kind, namespace and name,
// resourceVersions, finalizers that hold a deletion, the status subresource, kinds that are not served,
// and fault hooks that fail the next call of an operation on a kind. Held to the real port by one shared
// suite (harness/fakes/kube-port-contract.ts). Not evidence that a feature works against Kubernetes: the
// integration suites are.
import { KubeApiError, apiVersionOf, type Kind, type KubeObject } from "../../src/runtime/port/kube-rest.ts";
import { deepEqual } from "../../src/runtime/base/conditions.ts";
import { sameStatus, staleWriteError, type Kube, type ObjectRef } from "../../src/runtime/port/kube.ts";
import type { CacheIndex } from "../../src/runtime/port/object-index.ts";
import { matchesSelector } from "../../src/runtime/base/selector.ts";

export type Operation =
  | "get"
  | "list"
  | "apply"
  | "create"
  | "patchStatus"
  | "ensureFinalizer"
  | "removeFinalizer"
  | "patchMetadata"
  | "delete";

interface Fault {
  op: Operation;
  kind: string;
  name?: string | undefined;
  error: Error;
  times: number;
}

const clone = <T>(value: T): T => structuredClone(value);

export class FakeKube implements Kube {
  private readonly objects = new Map<string, KubeObject>();
  /** The label and annotation keys each object's last apply set: what server-side apply owns for us. */
  private readonly applied = new Map<string, { labels: string[]; annotations: string[] }>();
  private readonly unserved = new Set<string>();
  private readonly released = new Set<string>();
  private faults: Fault[] = [];
  private version = 1;
  /** Every call, in order: the operation, the kind and the object's namespace/name. */
  readonly calls: { op: Operation; kind: string; ref: string }[] = [];
  private readonly clock: () => Date;

  constructor(options: { now?: () => Date } = {}) {
    this.clock = options.now ?? (() => new Date());
  }

  /**
   * Finalizers a delete releases at once: the part of a controller this world does not run (the
   * topology controller's, say, for the children an order applies with its finalizer).
   */
  releaseOnDelete(...finalizers: string[]): void {
    for (const f of finalizers) this.released.add(f);
  }

  /** Makes every call on `kind` fail as the API server fails for a resource it does not serve. */
  notServed(kind: Kind): void {
    this.unserved.add(kind.kind);
  }

  served(kind: Kind): void {
    this.unserved.delete(kind.kind);
  }

  /** Fails the next `times` calls of `op` on `kind` (and `name`, when given) with `error`. */
  failNext(op: Operation, kind: Kind, error: Error, options: { name?: string; times?: number } = {}): void {
    this.faults.push({ op, kind: kind.kind, name: options.name, error, times: options.times ?? 1 });
  }

  /** Puts an object in place as someone else would, bumping its resourceVersion. */
  put(kind: Kind, object: KubeObject): KubeObject {
    const stored: KubeObject = {
      ...clone(object),
      apiVersion: apiVersionOf(kind),
      kind: kind.kind,
      metadata: {
        uid: `uid-${object.metadata?.name ?? ""}-${this.version}`,
        // The API server's JSON carries times as strings; client-node's type says Date.
        creationTimestamp: this.clock().toISOString() as unknown as Date,
        generation: 1,
        ...clone(object.metadata ?? {}),
        resourceVersion: String(++this.version),
      },
    };
    this.objects.set(this.key(kind, stored.metadata?.namespace ?? "", stored.metadata?.name ?? ""), stored);
    return clone(stored);
  }

  /** The stored object, as a copy. */
  read(kind: Kind, namespace: string, name: string): KubeObject | undefined {
    const object = this.objects.get(this.key(kind, namespace, name));
    return object ? clone(object) : undefined;
  }

  /** Every stored object of `kind`, as copies. */
  all(kind: Kind): KubeObject[] {
    return [...this.objects.entries()]
      .filter(([key]) => key.startsWith(`${kind.kind}|`))
      .map(([, o]) => clone(o));
  }

  /** Removes an object at once, finalizers or not (someone else's hard delete). */
  remove(kind: Kind, namespace: string, name: string): void {
    this.objects.delete(this.key(kind, namespace, name));
  }

  /** Calls that reached the fake, by operation. */
  count(op?: Operation): number {
    return op ? this.calls.filter((c) => c.op === op).length : this.calls.length;
  }

  /** Calls that write: everything but get and list. */
  writes(): { op: Operation; kind: string; ref: string }[] {
    return this.calls.filter((c) => c.op !== "get" && c.op !== "list");
  }

  async get(kind: Kind, ref: ObjectRef): Promise<KubeObject | undefined> {
    this.enter("get", kind, ref);
    return this.read(kind, ref.namespace, ref.name);
  }

  async list(kind: Kind, namespace: string, labelSelector: string): Promise<KubeObject[]> {
    this.enter("list", kind, { namespace, name: "" });
    return this.all(kind).filter(
      (o) =>
        (namespace === "" || o.metadata?.namespace === namespace) &&
        matchesSelector(labelSelector, o.metadata?.labels),
    );
  }

  /** A list, filtered by the index's values: what the port does where no cache holds the kind. */
  async listByIndex(kind: Kind, namespace: string, index: CacheIndex, value: string): Promise<KubeObject[]> {
    return (await this.list(kind, namespace, "")).filter((o) => index.values(o).includes(value));
  }

  async apply(kind: Kind, object: KubeObject): Promise<KubeObject> {
    const ref = refOf(object);
    this.enter("apply", kind, ref);
    const key = this.key(kind, ref.namespace, ref.name);
    const existing = this.objects.get(key);
    const owned = this.applied.get(key) ?? { labels: [], annotations: [] };
    const { metadata = {}, ...fields } = clone(object);
    this.applied.set(key, {
      labels: Object.keys(metadata.labels ?? {}),
      annotations: Object.keys(metadata.annotations ?? {}),
    });
    if (!existing) return this.put(kind, { ...object, metadata: { ...object.metadata } });
    const next: KubeObject = { ...existing, ...fields, metadata: { ...existing.metadata } };
    // A key this manager applied before and leaves out now is removed; another writer's stays.
    const merged = (
      before: Record<string, string> | undefined,
      dropped: string[],
      now?: Record<string, string>,
    ) => {
      const kept = Object.entries(before ?? {}).filter(([k]) => !dropped.includes(k) || (now && k in now));
      const result = { ...Object.fromEntries(kept), ...now };
      return Object.keys(result).length > 0 ? result : undefined;
    };
    const labels = merged(existing.metadata?.labels, owned.labels, metadata.labels);
    const annotations = merged(existing.metadata?.annotations, owned.annotations, metadata.annotations);
    const { labels: _l, annotations: _a, ...rest } = next.metadata ?? {};
    next.metadata = {
      ...rest,
      ...(labels ? { labels } : {}),
      ...(annotations ? { annotations } : {}),
      ...(metadata.ownerReferences ? { ownerReferences: metadata.ownerReferences } : {}),
    };
    if (JSON.stringify(existing["spec"]) !== JSON.stringify(next["spec"]) && next.metadata) {
      next.metadata.generation = (existing.metadata?.generation ?? 1) + 1;
    }
    // An apply that changes nothing is no write: the resourceVersion stays, as on the API server.
    if (deepEqual(next, existing)) return clone(existing);
    return this.store(kind, next);
  }

  async create(kind: Kind, object: KubeObject): Promise<KubeObject> {
    const ref = refOf(object);
    this.enter("create", kind, ref);
    if (this.objects.has(this.key(kind, ref.namespace, ref.name))) {
      throw new KubeApiError(
        "POST",
        ref.name,
        409,
        "AlreadyExists",
        `${kind.kind} "${ref.name}" already exists`,
      );
    }
    return this.put(kind, object);
  }

  async patchStatus(kind: Kind, object: KubeObject, status: Record<string, unknown>): Promise<boolean> {
    const ref = refOf(object);
    const before = (object.status ?? {}) as Record<string, unknown>;
    if (sameStatus(before, status)) return false;
    this.enter("patchStatus", kind, ref);
    const existing = this.mustExist(kind, ref, "PATCH");
    this.checkVersion(existing, object, ref);
    const cleaned = Object.fromEntries(Object.entries(status).filter(([, v]) => v !== undefined));
    this.store(kind, { ...existing, status: clone(cleaned) });
    return true;
  }

  async ensureFinalizer(kind: Kind, object: KubeObject, finalizer: string): Promise<boolean> {
    const finalizers = object.metadata?.finalizers ?? [];
    if (finalizers.includes(finalizer)) return false;
    const ref = refOf(object);
    this.enter("ensureFinalizer", kind, ref);
    const existing = this.mustExist(kind, ref, "PATCH");
    this.checkVersion(existing, object, ref);
    this.store(kind, {
      ...existing,
      metadata: { ...existing.metadata, finalizers: [...finalizers, finalizer] },
    });
    return true;
  }

  async removeFinalizer(kind: Kind, object: KubeObject, finalizer: string): Promise<void> {
    const finalizers = object.metadata?.finalizers ?? [];
    if (!finalizers.includes(finalizer)) return;
    const ref = refOf(object);
    this.enter("removeFinalizer", kind, ref);
    const existing = this.objects.get(this.key(kind, ref.namespace, ref.name));
    if (!existing) return;
    this.checkVersion(existing, object, ref);
    const left = finalizers.filter((f) => f !== finalizer);
    if (left.length === 0 && existing.metadata?.deletionTimestamp) {
      this.objects.delete(this.key(kind, ref.namespace, ref.name));
      return;
    }
    this.store(kind, { ...existing, metadata: { ...existing.metadata, finalizers: left } });
  }

  async patchMetadata(
    kind: Kind,
    object: KubeObject,
    metadata: Record<string, unknown>,
  ): Promise<KubeObject> {
    const ref = refOf(object);
    this.enter("patchMetadata", kind, ref);
    const existing = this.mustExist(kind, ref, "PATCH");
    this.checkVersion(existing, object, ref);
    return this.store(kind, { ...existing, metadata: mergePatch(existing.metadata ?? {}, clone(metadata)) });
  }

  async delete(kind: Kind, ref: ObjectRef): Promise<void> {
    this.enter("delete", kind, ref);
    const key = this.key(kind, ref.namespace, ref.name);
    const existing = this.objects.get(key);
    if (!existing) return;
    const finalizers = (existing.metadata?.finalizers ?? []).filter((f) => !this.released.has(f));
    if (finalizers.length === 0) {
      this.objects.delete(key);
      return;
    }
    if (existing.metadata?.deletionTimestamp) return;
    this.store(kind, {
      ...existing,
      metadata: {
        ...existing.metadata,
        finalizers,
        deletionTimestamp: this.clock().toISOString() as unknown as Date,
      },
    });
  }

  private store(kind: Kind, object: KubeObject): KubeObject {
    const ref = refOf(object);
    const stored = { ...object, metadata: { ...object.metadata, resourceVersion: String(++this.version) } };
    this.objects.set(this.key(kind, ref.namespace, ref.name), stored);
    return clone(stored);
  }

  private enter(op: Operation, kind: Kind, ref: ObjectRef): void {
    this.calls.push({ op, kind: kind.kind, ref: `${ref.namespace}/${ref.name}` });
    if (this.unserved.has(kind.kind)) {
      throw new KubeApiError(
        op,
        kind.plural,
        404,
        "Not Found",
        "the server could not find the requested resource",
      );
    }
    const fault = this.faults.find(
      (f) => f.op === op && f.kind === kind.kind && (f.name === undefined || f.name === ref.name),
    );
    if (!fault) return;
    if (--fault.times <= 0) this.faults = this.faults.filter((f) => f !== fault);
    throw fault.error;
  }

  private mustExist(kind: Kind, ref: ObjectRef, method: string): KubeObject {
    const existing = this.objects.get(this.key(kind, ref.namespace, ref.name));
    if (!existing)
      throw new KubeApiError(method, ref.name, 404, "NotFound", `${kind.kind} "${ref.name}" not found`);
    return existing;
  }

  /** A write that carries a stale resourceVersion fails as the real port's do: transient, a 409 inside. */
  private checkVersion(existing: KubeObject, read: KubeObject, ref: ObjectRef): void {
    const expected = read.metadata?.resourceVersion;
    if (expected !== undefined && expected !== existing.metadata?.resourceVersion) {
      const conflict = new KubeApiError("PATCH", ref.name, 409, "Conflict", "the object has been modified");
      throw staleWriteError(`writing ${kind(read)} "${ref.name}"`, conflict);
    }
  }

  private key(kind: Kind, namespace: string, name: string): string {
    return `${kind.kind}|${namespace}|${name}`;
  }
}

const kind = (object: KubeObject) => object.kind ?? "the object";

/** RFC 7386: maps merge key by key, null removes a key, anything else replaces. */
function mergePatch<T extends object>(target: T, patch: object): T {
  const result = { ...target } as Record<string, unknown>;
  for (const [key, value] of Object.entries(patch)) {
    const before = result[key];
    if (value === null) delete result[key];
    else if (isMap(value) && isMap(before)) result[key] = mergePatch(before, value);
    else result[key] = value;
  }
  return result as T;
}

const isMap = (value: unknown): value is object =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function refOf(object: KubeObject): ObjectRef {
  return { namespace: object.metadata?.namespace ?? "", name: object.metadata?.name ?? "" };
}

/** An API error as the server answers it, for fault hooks. */
export function apiError(code: number, reason: string, message = reason): KubeApiError {
  return new KubeApiError("TEST", "", code, reason, message);
}
